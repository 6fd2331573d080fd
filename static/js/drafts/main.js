// The drafts editor's entry module: templates/drafts/editor.html loads only
// this one, as <script type="module">, and it imports the rest. On
// DOMContentLoaded it reads the page, makes the one CodeMirror instance (the
// vendored global window.CodeMirror), lets each module wire its controls,
// then opens the file (and the suggestion) the URL names.
//
// The editor: a tab per open file (tabs.js, marks.js), explicit saves that
// name the version they edited (save.js), a history panel (history.js),
// suggestions reviewed hunk by hunk (review.js, review-bar.js, review-doc.js,
// suggestions-live.js), a preview scroll-synced from the editor (preview.js),
// LaTeX compile and PDF export (build.js), and the panel beside the editor
// (side.js, side-toggles.js) with the draft's chat (chat-panel.js; chat.js
// drives the composer). Shared state lives in state.js and nowhere else.
//
// No module does anything when imported, only when main.js starts it or an
// event fires. The imports form no cycle: collectstatic names each module by
// a hash of its content, its imports' hashed names included, and a cycle
// never settles (tests/drafts/test_editor_static.py checks). Where a painter
// low down draws a button a higher module answers (the offer's Review), the
// higher one listens on the container. Module scripts run after the
// scripts before them (CodeMirror deferred, chat.js a module too), in
// document order, and before DOMContentLoaded.
//
// Exports nothing.
import { page, pageRead, state } from "./state.js";
import { say } from "./message.js";
import { activate, tabsStart } from "./tabs.js";
import { layout } from "./side.js";
import { sideTogglesStart } from "./side-toggles.js";
import { saveStart } from "./save.js";
import { historyStart } from "./history.js";
import { openReview, reviewStart } from "./review.js";
import { listen } from "./suggestions-live.js";
import { previewStart } from "./preview.js";
import { buildStart } from "./build.js";
import { chatPanelStart } from "./chat-panel.js";

function start() {
  const root = document.querySelector("[data-drafts-editor]");
  if (!root || !window.CodeMirror) return;
  pageRead(root);
  page.cm = window.CodeMirror(page.editorEl, {
    value: "",
    theme: "jarvis",
    lineNumbers: true,
    lineWrapping: true,
    readOnly: "nocursor",
    viewportMargin: 40,
    screenReaderLabel: "File text"
  });

  sideTogglesStart();
  saveStart();
  historyStart();
  reviewStart();
  previewStart();
  buildStart();
  tabsStart();
  chatPanelStart();

  JSON.parse(document.getElementById("drafts-pending").textContent).forEach(function (p) {
    state.pending[p.id] = p;
  });
  layout();
  listen(1000);
  if (page.urls.opened) {
    activate(page.urls.opened).then(function () {
      if (page.urls.proposal) openReview(page.urls.proposal);
    });
  } else {
    say("This draft has no files yet: add one on the left.", "info");
  }
}

document.addEventListener("DOMContentLoaded", start);
