// Tabs: one per open file, each its own CodeMirror Doc (its own text, undo
// history and clean generation), and what the editor shows for the active
// one: its file, or its suggestion's review. The files list on the left opens
// them.
//
// Exports:
//   activate(name) -> Promise<tab|null>  open (if needed) and show a file's tab
//   show(tab)             put the tab's file (or its review) in the editor
//   refreshReviewWidth()  re-fit an open review to the editor's width
//   tabsStart()           wire the files list
import { dirty, page, reviewing, state } from "./state.js";
import { request } from "./http.js";
import { say } from "./message.js";
import { isMarkdown, isTex, modeFor } from "./filetypes.js";
import { WIDE_PX } from "./review-doc.js";
import { paintMarks, paintTab } from "./marks.js";
import { refreshPreview } from "./preview.js";
import { loadHistory } from "./history.js";
import { save } from "./save.js";
import { layout } from "./side.js";
import { showBuild } from "./build.js";
import { paintOffer, paintReviewBar } from "./review-bar.js";

function makeTab(name) {
  const tab = { name: name, doc: null, hash: "", clean: 0, review: null, view: "file", ready: null };
  tab.el = document.createElement("div");
  tab.el.className = "drafts-tab";
  tab.el.setAttribute("data-tab", name);
  tab.nameButton = document.createElement("button");
  tab.nameButton.type = "button";
  tab.nameButton.className = "drafts-tab__name";
  tab.nameButton.setAttribute("role", "tab");
  tab.nameButton.textContent = name;
  tab.mark = document.createElement("span");
  tab.mark.className = "drafts-pending-mark";
  tab.mark.textContent = " ✎";
  tab.mark.title = "A suggestion is waiting for your review";
  tab.mark.hidden = true;
  tab.nameButton.appendChild(tab.mark);
  tab.closeButton = document.createElement("button");
  tab.closeButton.type = "button";
  tab.closeButton.className = "drafts-tab__close";
  tab.el.appendChild(tab.nameButton);
  tab.el.appendChild(tab.closeButton);
  tab.nameButton.addEventListener("click", function () { activate(name); });
  tab.closeButton.addEventListener("click", function () { closeTab(tab); });
  page.tabsEl.appendChild(tab.el);
  state.tabs[name] = tab;
  return tab;
}

function openTab(name) {
  const tab = state.tabs[name] || makeTab(name);
  if (!tab.ready) {
    tab.ready = request(page.urls.urlFile + "?name=" + encodeURIComponent(name)).then(function (r) {
      if (!r.ok) {
        tab.el.remove();
        delete state.tabs[name];
        say(r.data.error || "Could not open " + name + ".", "error");
        return null;
      }
      tab.doc = window.CodeMirror.Doc(r.data.text, modeFor(name));
      tab.hash = r.data.hash;
      tab.clean = tab.doc.changeGeneration(true);
      tab.doc.on("change", function () { paintTab(tab); });
      r.data.proposals.forEach(function (p) { state.pending[p.id] = p; });
      paintMarks();
      return tab;
    });
  }
  return tab.ready;
}

function closeTab(tab) {
  const go = dirty(tab) ? save(tab) : Promise.resolve(true);
  go.then(function (saved) {
    if (!saved || Object.keys(state.tabs).length < 2) return;
    const names = Object.keys(state.tabs);
    tab.el.remove();
    delete state.tabs[tab.name];
    if (tab === state.active) {
      state.active = null;
      const next = names[names.indexOf(tab.name) + 1] || names[names.indexOf(tab.name) - 1];
      if (next) activate(next);
    }
    paintMarks();
  });
}

export function activate(name) {
  return openTab(name).then(function (tab) {
    if (!tab) return null;
    const switched = state.active !== tab;
    state.active = tab;
    show(tab);
    if (switched) {
      document.querySelectorAll("[data-chat-file]").forEach(function (input) { input.value = name; });
      // Forms that come back to the editor (rename, keep, the chat's first
      // message) come back to this file.
      document.querySelectorAll("input[data-next]").forEach(function (input) {
        input.value = page.urls.urlEditor + "?file=" + encodeURIComponent(name);
      });
      window.history.replaceState(null, "", page.urls.urlEditor + "?file=" + encodeURIComponent(name));
      if (page.compileButton) page.compileButton.hidden = !isTex(name);
      if (page.exportButton) page.exportButton.hidden = !isMarkdown(name);
      page.buildStatus.textContent = "";
      page.saveStatus.textContent = "";
      const built = state.builds[name];
      state.previewView = built && built.ok && built.kind === "compile" ? "pdf" : "text";
      showBuild();
      refreshPreview();
      loadHistory();
    }
    paintMarks();
    return tab;
  });
}

// Put the tab's file (or its review) in the editor.
export function show(tab) {
  const cm = page.cm;
  const inReview = tab.view === "review" && !!tab.review;
  if (!inReview) state.previewDuringReview = false;
  page.root.toggleAttribute("data-reviewing", inReview);
  layout();
  if (inReview && (!tab.review.doc || tab.review.wide !== isWide())) tab.review.render(isWide());
  const doc = inReview ? tab.review.doc : tab.doc;
  if (cm.getDoc() !== doc) cm.swapDoc(doc);
  cm.setOption("readOnly", inReview ? true : false);
  cm.setOption("lineNumbers", !inReview);
  cm.setOption("extraKeys", !inReview && isMarkdown(tab.name) ? { Enter: "newlineAndIndentContinueMarkdownList" } : null);
  paintReviewBar(tab);
  paintOffer(tab);
  cm.refresh();
}

function isWide() { return page.editorEl.clientWidth >= WIDE_PX; }

export function refreshReviewWidth() {
  if (state.active && reviewing()) show(state.active);
}

export function tabsStart() {
  page.root.querySelectorAll("a[data-file]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      activate(link.getAttribute("data-file"));
    });
  });
}
