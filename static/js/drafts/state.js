// The drafts editor's shared state: the one place its modules share anything
// (nothing is put on window).
//
// Exports:
//   page  - fixed once main.js has started (pageRead): the editor's root, its
//           data-* URLs (page.urls), the elements the modules paint, and the
//           one CodeMirror instance (page.cm, set by main.js).
//   state - what changes: the open tabs, the active one, the suggestions
//           waiting, build results, the side panel and the preview's view.
//   pageRead(root) - fill `page` (main.js calls it once).
//   SIDE_KEY - where the side panel choice is remembered (localStorage).
//   dirty, anyDirty, hasPending, pendingFor, reviewing, effectiveSide - the
//           questions the modules ask of them.

export const SIDE_KEY = "jarvis.drafts.side";

export const page = {};

export const state = {
  tabs: {}, // file name -> tab
  active: null, // the tab in the editor
  pending: {}, // proposal id -> {id, filename, changes}
  builds: {}, // file name -> {kind, ok, url, seconds, error, log}
  previewView: "text", // "text" or "pdf" (a compiled .tex)
  side: "preview", // "preview", "chat" or "" (neither), as the person chose
  previewDuringReview: false // the person asked for the preview mid-review
};

export function pageRead(root) {
  function $(selector) { return root.querySelector(selector); }
  page.root = root;
  page.urls = root.dataset;
  page.tabsEl = $("[data-tabs]");
  page.editorEl = $("[data-editor]");
  page.messageEl = $("[data-message]");
  page.offerEl = $("[data-offer]");
  page.reviewBar = $("[data-review-bar]");
  page.saveButton = $("[data-action=save]");
  page.saveStatus = $("[data-save-status]");
  page.compileButton = $("[data-action=compile]");
  page.exportButton = $("[data-action=export]");
  page.buildStatus = $("[data-build-status]");
  page.buildOutput = $("[data-build-output]");
  page.previewFrame = $("[data-preview-frame]");
  page.pdfFrame = $("[data-pdf-frame]");
  page.pdfViews = $("[data-pdf-views]");
  page.previewName = $("[data-preview-name]");
  page.historyEl = $("[data-history]");
  page.historyList = $("[data-history-list]");
  page.chatPane = $("[data-pane=chat]");
  page.previewPane = $("[data-pane=preview]");
  page.chatMessages = $("[data-chat-messages]");
  page.composer = document.getElementById("composer");
}

export function dirty(tab) { return !!(tab && tab.doc && !tab.doc.isClean(tab.clean)); }

export function anyDirty() {
  return Object.keys(state.tabs).some(function (name) { return dirty(state.tabs[name]); });
}

export function hasPending(name) {
  return Object.keys(state.pending).some(function (id) { return state.pending[id].filename === name; });
}

export function pendingFor(name) {
  return Object.keys(state.pending).map(function (id) { return state.pending[id]; })
    .filter(function (p) { return p.filename === name; })
    .sort(function (a, b) { return a.id - b.id; });
}

export function reviewing() { return !!(state.active && state.active.view === "review" && state.active.review); }

// A review wants the width (Current | Suggested needs 720px) and the preview
// shows the saved file, not the review: the preview steps aside meanwhile.
export function effectiveSide() {
  if (state.side === "preview" && reviewing() && !state.previewDuringReview) return "";
  return state.side;
}
