// The editor's one message line, above the text.
//
// Exports:
//   say(text, kind) - show text as "info", "success" or "error"; say("")
//                     clears it. Errors stay until something works; the
//                     rest fades after 15 s.
import { page } from "./state.js";

let sayTimer = null;

export function say(text, kind) {
  kind = kind || "info";
  page.messageEl.textContent = text || "";
  page.messageEl.className = "alert drafts-message alert--" + kind;
  page.messageEl.hidden = !text;
  // Errors stay until something works; news fades once read.
  window.clearTimeout(sayTimer);
  if (text && kind !== "error") sayTimer = window.setTimeout(function () { say(""); }, 15000);
}
