// What changes the editor's width: the Preview and Chat toggles (the choice
// is remembered in localStorage) and the window being resized. Either way a
// review may switch between Current | Suggested columns and inline, and the
// preview's line positions are measured again.
//
// Exports: sideTogglesStart() - read the remembered choice, wire the toggles
//          and the resize.
import { SIDE_KEY, effectiveSide, page, reviewing, state } from "./state.js";
import { measureAnchors, syncPreview } from "./preview.js";
import { layout } from "./side.js";
import { refreshReviewWidth, show } from "./tabs.js";

// The width below which the panes stack (app.css, the drafts' media query).
const PHONE_QUERY = "(max-width: 56rem)";

export function sideTogglesStart() {
  let side = window.localStorage.getItem(SIDE_KEY);
  // At phone width the preview replaces the editor (app.css), so a draft
  // opened there without a remembered choice opens for editing.
  if (side === null && window.matchMedia(PHONE_QUERY).matches) side = "";
  if (side !== "" && side !== "chat") side = "preview";
  state.side = side;

  page.root.querySelectorAll("[data-side-toggle]").forEach(function (button) {
    button.addEventListener("click", function () {
      const mode = button.getAttribute("data-side-toggle");
      const next = effectiveSide() === mode ? "" : mode;
      state.side = next;
      state.previewDuringReview = next === "preview" && reviewing();
      window.localStorage.setItem(SIDE_KEY, state.side);
      // The editor's width changed: a review may switch between columns and inline.
      if (reviewing()) show(state.active);
      else layout();
      if (next === "chat") document.getElementById("composer-text").focus();
    });
  });

  let resizeTimer = null;
  window.addEventListener("resize", function () {
    window.clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(function () {
      refreshReviewWidth();
      measureAnchors();
      syncPreview();
    }, 150);
  });
}
