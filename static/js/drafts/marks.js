// The marks that show state on the tabs and the files list: unsaved (the
// tab's close control becomes ●), a suggestion waiting (✎), which one is
// open; and the Save button, enabled only while the open tab is unsaved.
//
// Exports:
//   paintTab(tab)  repaint one tab (and Save, if it is the active one)
//   paintMarks()   repaint the files list and every tab
import { dirty, hasPending, page, state } from "./state.js";

export function paintMarks() {
  page.root.querySelectorAll("a[data-file]").forEach(function (link) {
    link.querySelector("[data-pending-mark]").hidden = !hasPending(link.getAttribute("data-file"));
    link.toggleAttribute("aria-current", !!(state.active && state.active.name === link.getAttribute("data-file")));
    if (link.hasAttribute("aria-current")) link.setAttribute("aria-current", "true");
  });
  Object.keys(state.tabs).forEach(function (name) { paintTab(state.tabs[name]); });
}

export function paintTab(tab) {
  const isDirty = dirty(tab);
  tab.el.toggleAttribute("data-dirty", isDirty);
  tab.el.classList.toggle("drafts-tab--active", tab === state.active);
  tab.nameButton.setAttribute("aria-selected", String(tab === state.active));
  tab.mark.hidden = !hasPending(tab.name);
  tab.closeButton.textContent = isDirty ? "●" : "×";
  tab.closeButton.title = isDirty ? "Unsaved changes: save and close" : "Close";
  tab.closeButton.setAttribute("aria-label", (isDirty ? "Save and close " : "Close ") + tab.name);
  // The only tab is not closed, but its control still says it is unsaved.
  tab.closeButton.hidden = Object.keys(state.tabs).length < 2 && !isDirty;
  if (tab === state.active) page.saveButton.disabled = !isDirty;
}
