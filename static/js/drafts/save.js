// Saving: explicit, never automatic (a save is the person's act, and the text
// on screen is not always the file: a review shows two versions at once).
// Each save names the version it edited (the hash the tab loaded); a file
// changed underneath is refused by the server and the tab stays unsaved.
//
// Exports:
//   save(tab) -> Promise<bool>  write the tab if it has unsaved changes
//   saveAll() -> Promise<bool>  every unsaved tab
//   saveStart()                 wire the Save button, Ctrl/Cmd-S, and the
//                               warning on leaving with unsaved text
import { anyDirty, dirty, page, state } from "./state.js";
import { request } from "./http.js";
import { timeOfDay } from "./clock.js";
import { say } from "./message.js";
import { paintTab } from "./marks.js";
import { refreshPreview } from "./preview.js";
import { loadHistory } from "./history.js";

export function save(tab) {
  if (!tab || !tab.doc) return Promise.resolve(false);
  if (!dirty(tab)) return Promise.resolve(true);
  if (tab.saving) return tab.saving;
  const generation = tab.doc.changeGeneration(true);
  const text = tab.doc.getValue();
  page.saveStatus.textContent = "Saving…";
  tab.saving = request(page.urls.urlSave, { method: "POST", body: { name: tab.name, text: text, hash: tab.hash } })
    .then(function (r) {
      tab.saving = null;
      if (!r.ok) {
        page.saveStatus.textContent = "Not saved";
        say(r.data.error || "Could not save " + tab.name + ".", "error");
        paintTab(tab);
        return false;
      }
      tab.hash = r.data.hash;
      tab.clean = generation;
      page.saveStatus.textContent = "Saved " + timeOfDay(new Date());
      if (page.messageEl.classList.contains("alert--error")) say("");
      paintTab(tab);
      if (tab === state.active) loadHistory();
      return true;
    });
  return tab.saving;
}

export function saveAll() {
  const names = Object.keys(state.tabs).filter(function (name) { return dirty(state.tabs[name]); });
  return Promise.all(names.map(function (name) { return save(state.tabs[name]); }))
    .then(function (results) { return results.every(Boolean); });
}

// The person's save: write, then re-render the preview of what was written.
function saveActive() {
  if (!state.active) return;
  save(state.active).then(function (ok) { if (ok) refreshPreview(); });
}

export function saveStart() {
  page.saveButton.addEventListener("click", saveActive);
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && (event.key === "s" || event.key === "S")) {
      event.preventDefault();
      saveActive();
    }
  }, true);

  window.addEventListener("beforeunload", function (event) {
    if (anyDirty()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
}
