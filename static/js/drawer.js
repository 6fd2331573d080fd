// Drawers on a narrow screen: the chat list and the library filters fold away
// behind a button so the conversation (or the results) fill the phone.
//
// Markup: <button data-drawer-toggle aria-controls="ID" aria-expanded="false" hidden>
// and the panel <… id="ID" data-drawer>. This file shows the button and marks
// the panel closed; the CSS (app.css, "Drawers") hides a closed panel only
// below the drawer width, so without this file, or on a wide screen, the
// panel is simply there. Escape, a second press or a tap outside closes it;
// opening moves focus into it and closing hands focus back to the button.

function panelOf(button) { return document.getElementById(button.getAttribute("aria-controls")); }

function isNarrow(button) {
  // The button is display:none on a wide screen (CSS), so focus and outside
  // taps are left alone there.
  return button.offsetParent !== null;
}

function setOpen(button, open, restoreFocus) {
  const panel = panelOf(button);
  if (!panel) return;
  panel.setAttribute("data-drawer", open ? "open" : "closed");
  button.setAttribute("aria-expanded", open ? "true" : "false");
  if (open) {
    const first = panel.querySelector("a[href], button:not([disabled]), input:not([type=hidden]), select, textarea, [tabindex]");
    if (first) first.focus();
  } else if (restoreFocus) {
    button.focus();
  }
}

function openToggles() {
  return Array.prototype.filter.call(
    document.querySelectorAll("[data-drawer-toggle][aria-expanded=true]"), isNarrow);
}

function setup(button) {
  const panel = panelOf(button);
  if (!panel || button.hasAttribute("data-drawer-ready")) return;
  button.setAttribute("data-drawer-ready", "");
  panel.setAttribute("data-drawer", "closed");
  button.hidden = false;
  button.addEventListener("click", function () {
    setOpen(button, button.getAttribute("aria-expanded") !== "true", true);
  });
  panel.querySelectorAll("[data-drawer-close]").forEach(function (close) {
    close.hidden = false;
    close.addEventListener("click", function () { setOpen(button, false, true); });
  });
}

document.addEventListener("keydown", function (event) {
  if (event.key !== "Escape") return;
  openToggles().forEach(function (button) { setOpen(button, false, true); });
});

// A tap outside an open overlay drawer (the chat list) or menu (the top
// nav, the chat's actions) closes it; an inline one (the filters) stays
// until its button is pressed again.
document.addEventListener("click", function (event) {
  openToggles().forEach(function (button) {
    const panel = panelOf(button);
    const kind = panel && panel.getAttribute("data-drawer-kind");
    if (kind !== "overlay" && kind !== "menu") return;
    if (panel.contains(event.target) || button.contains(event.target)) return;
    setOpen(button, false, false);
  });
});

function setupWithin(root) {
  if (root.matches && root.matches("[data-drawer-toggle]")) setup(root);
  if (root.querySelectorAll) root.querySelectorAll("[data-drawer-toggle]").forEach(setup);
}
document.addEventListener("DOMContentLoaded", function () { setupWithin(document); });
// Content htmx swaps in later (a page part re-rendered) gets its drawers too.
document.addEventListener("htmx:load", function (event) { setupWithin(event.detail.elt); });
