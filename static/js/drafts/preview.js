// The preview frame: the saved file rendered by the server, and kept at the
// editor's place as the editor scrolls (Markdown only, one way). The frame's
// sandbox is fixed in the template ("allow-same-origin", never scripts):
// nothing here sets it.
//
// Exports:
//   refreshPreview()  reload the frame with the active file as saved
//   measureAnchors()  re-read where each source line's block sits
//   syncPreview()     scroll the frame to the editor's top line
//   previewStart()    follow the editor's scrolling and the frame's loads
import { effectiveSide, page, reviewing, state } from "./state.js";
import { isMarkdown } from "./filetypes.js";

let anchors = null; // {file, list: [{line, top}], height}
let previewVersion = 0;

export function refreshPreview() {
  if (!state.active) return;
  page.previewName.textContent = state.active.name;
  previewVersion += 1;
  anchors = null;
  page.previewFrame.setAttribute("data-preview-file", state.active.name);
  page.previewFrame.src = page.urls.urlPreview + "?name=" + encodeURIComponent(state.active.name) + "&v=" + previewVersion;
}

// Where each source line's block sits in the frame, tagged with its file so
// a tab switch cannot scroll one file's preview to another's lines.
export function measureAnchors() {
  const doc = page.previewFrame.contentDocument;
  const win = page.previewFrame.contentWindow;
  const file = page.previewFrame.getAttribute("data-preview-file");
  if (!doc || !doc.body || !win || !file) return;
  const list = [];
  doc.querySelectorAll("[data-line]").forEach(function (node) {
    const line = parseInt(node.getAttribute("data-line"), 10);
    if (!isNaN(line)) list.push({ line: line, top: node.getBoundingClientRect().top + win.scrollY });
  });
  list.sort(function (a, b) { return a.line - b.line || a.top - b.top; });
  anchors = { file: file, list: list, height: doc.documentElement.scrollHeight };
}

export function syncPreview() {
  const active = state.active;
  const cm = page.cm;
  if (!active || reviewing() || !anchors || anchors.file !== active.name || !isMarkdown(active.name)) return;
  if (effectiveSide() !== "preview" || state.previewView !== "text") return;
  const win = page.previewFrame.contentWindow;
  if (!win) return;
  const info = cm.getScrollInfo();
  if (info.top + info.clientHeight >= info.height - 2) {
    win.scrollTo(0, anchors.height);
    return;
  }
  const line = cm.lineAtHeight(info.top, "local");
  const lineTop = cm.heightAtLine(line, "local");
  const lineHeight = cm.getLineHandle(line).height || 1;
  const position = line + Math.max(0, Math.min(1, (info.top - lineTop) / lineHeight));
  let before = { line: 0, top: 0 };
  let after = { line: cm.lineCount(), top: anchors.height };
  for (let i = 0; i < anchors.list.length; i++) {
    if (anchors.list[i].line <= position) {
      before = anchors.list[i];
    } else {
      after = anchors.list[i];
      break;
    }
  }
  const span = after.line - before.line;
  const y = before.top + (span > 0 ? (position - before.line) / span : 0) * (after.top - before.top);
  win.scrollTo(0, Math.max(0, y - 8));
}

export function previewStart() {
  // On scroll, and on updates too: line heights are estimates until the lines
  // are drawn, so the top line can change after the scroll that moved it.
  let syncQueued = false;
  function queueSync() {
    if (syncQueued) return;
    syncQueued = true;
    window.requestAnimationFrame(function () {
      syncQueued = false;
      syncPreview();
    });
  }
  page.cm.on("scroll", queueSync);
  page.cm.on("update", queueSync);
  page.previewFrame.addEventListener("load", function () {
    measureAnchors();
    syncPreview();
  });
}
