// The panel beside the editor: the preview, the chat, or neither, as
// state.effectiveSide() says (the person's choice, except that a review
// hides the preview meanwhile). side-toggles.js changes the choice.
//
// Exports: layout() - show that panel, mark its toggle, refit the editor.
import { effectiveSide, page } from "./state.js";
import { measureAnchors } from "./preview.js";

export function layout() {
  const shown = effectiveSide();
  page.root.setAttribute("data-side", shown);
  page.previewPane.hidden = shown !== "preview";
  page.chatPane.hidden = shown !== "chat";
  page.root.querySelectorAll("[data-side-toggle]").forEach(function (button) {
    button.setAttribute("aria-pressed", String(button.getAttribute("data-side-toggle") === shown));
  });
  if (shown === "chat") page.chatMessages.scrollTop = page.chatMessages.scrollHeight;
  page.cm.refresh();
  if (shown === "preview") measureAnchors();
}
