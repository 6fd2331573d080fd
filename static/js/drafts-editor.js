// The drafts editor: a tab per open file (each its own CodeMirror Doc, with
// its own text, undo history and clean generation), explicit saves that name
// the version they edited, a history panel, suggestion reviews
// (drafts-review.js), a preview frame scroll-synced from the editor, LaTeX
// compile and PDF export, and the chat panel beside it (chat.js drives the
// composer and the reply frames, as on the chat page).
//
// No autosave, on purpose: a save is the person's act, and the text on
// screen is not always the file (a review shows two versions at once).
// The preview frame's sandbox is fixed in the template ("allow-same-origin",
// never scripts; the PDF frame ""): this script never sets it.
(function () {
  "use strict";

  var ID = "987654321"; // the placeholder in the template's URLs
  var SIDE_KEY = "jarvis.drafts.side";

  function init() {
    var root = document.querySelector("[data-drafts-editor]");
    if (!root || !window.CodeMirror || !window.JarvisDrafts) return;
    var D = root.dataset;
    var Review = window.JarvisDrafts.Review;
    var csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";

    function $(selector) { return root.querySelector(selector); }
    var tabsEl = $("[data-tabs]");
    var editorEl = $("[data-editor]");
    var messageEl = $("[data-message]");
    var offerEl = $("[data-offer]");
    var reviewBar = $("[data-review-bar]");
    var saveButton = $("[data-action=save]");
    var saveStatus = $("[data-save-status]");
    var compileButton = $("[data-action=compile]");
    var exportButton = $("[data-action=export]");
    var buildStatus = $("[data-build-status]");
    var buildOutput = $("[data-build-output]");
    var previewFrame = $("[data-preview-frame]");
    var pdfFrame = $("[data-pdf-frame]");
    var pdfViews = $("[data-pdf-views]");
    var previewName = $("[data-preview-name]");
    var historyEl = $("[data-history]");
    var historyList = $("[data-history-list]");
    var chatPane = $("[data-pane=chat]");
    var previewPane = $("[data-pane=preview]");
    var chatMessages = $("[data-chat-messages]");
    var composer = document.getElementById("composer");

    var tabs = {}; // file name -> tab
    var active = null;
    var pending = {}; // proposal id -> {id, filename, changes}
    var builds = {}; // file name -> {kind, ok, url, seconds, error, log}
    var previewView = "text"; // "text" or "pdf" (a compiled .tex)
    var anchors = null; // {file, list: [{line, top}], height}
    var previewVersion = 0;

    function fill(template, id) {
      var at = template.lastIndexOf(ID);
      return template.slice(0, at) + String(id) + template.slice(at + ID.length);
    }

    function request(url, options) {
      options = options || {};
      var init = { method: options.method || "GET", credentials: "same-origin", headers: { Accept: "application/json" } };
      if (init.method !== "GET") init.headers["X-CSRFToken"] = csrf;
      if (options.body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(options.body);
      }
      return fetch(url, init).then(function (response) {
        return response.text().then(function (body) {
          var data;
          try {
            data = JSON.parse(body);
          } catch (err) {
            data = { error: "Jarvis answered " + response.status + " " + response.statusText + "." };
          }
          return { ok: response.ok, status: response.status, data: data };
        });
      }, function () {
        return { ok: false, status: 0, data: { error: "Could not reach Jarvis. Check the connection and try again." } };
      });
    }

    var sayTimer = null;
    function say(text, kind) {
      kind = kind || "info";
      messageEl.textContent = text || "";
      messageEl.className = "alert drafts-message alert--" + kind;
      messageEl.hidden = !text;
      // Errors stay until something works; news fades once read.
      window.clearTimeout(sayTimer);
      if (text && kind !== "error") sayTimer = window.setTimeout(function () { say(""); }, 15000);
    }

    function isMarkdown(name) { return /\.(md|markdown)$/i.test(name); }
    function isTex(name) { return /\.tex$/i.test(name); }

    function modeFor(name) {
      if (isMarkdown(name)) return { name: "markdown", fencedCodeBlockHighlighting: false };
      if (isTex(name)) return "stex";
      return "text/plain";
    }

    var cm = window.CodeMirror(editorEl, {
      value: "",
      theme: "jarvis",
      lineNumbers: true,
      lineWrapping: true,
      readOnly: "nocursor",
      viewportMargin: 40,
      screenReaderLabel: "File text"
    });

    // --- Side panel: the preview or the chat (or neither) --------------------

    var side = window.localStorage.getItem(SIDE_KEY);
    if (side !== "" && side !== "chat") side = "preview";
    var previewDuringReview = false; // the person asked for the preview mid-review

    function reviewing() { return !!(active && active.view === "review" && active.review); }

    // A review wants the width (Current | Suggested needs 720px) and the preview
    // shows the saved file, not the review: the preview steps aside meanwhile.
    function effectiveSide() {
      if (side === "preview" && reviewing() && !previewDuringReview) return "";
      return side;
    }

    function layout() {
      var shown = effectiveSide();
      root.setAttribute("data-side", shown);
      previewPane.hidden = shown !== "preview";
      chatPane.hidden = shown !== "chat";
      root.querySelectorAll("[data-side-toggle]").forEach(function (button) {
        button.setAttribute("aria-pressed", String(button.getAttribute("data-side-toggle") === shown));
      });
      if (shown === "chat") chatMessages.scrollTop = chatMessages.scrollHeight;
      cm.refresh();
      if (shown === "preview") measureAnchors();
    }

    root.querySelectorAll("[data-side-toggle]").forEach(function (button) {
      button.addEventListener("click", function () {
        var mode = button.getAttribute("data-side-toggle");
        var next = effectiveSide() === mode ? "" : mode;
        side = next;
        previewDuringReview = next === "preview" && reviewing();
        window.localStorage.setItem(SIDE_KEY, side);
        // The editor's width changed: a review may switch between columns and inline.
        if (reviewing()) show(active);
        else layout();
        if (next === "chat") document.getElementById("composer-text").focus();
      });
    });

    // --- Tabs ------------------------------------------------------------------

    function dirty(tab) { return !!(tab && tab.doc && !tab.doc.isClean(tab.clean)); }
    function anyDirty() { return Object.keys(tabs).some(function (name) { return dirty(tabs[name]); }); }

    function hasPending(name) {
      return Object.keys(pending).some(function (id) { return pending[id].filename === name; });
    }

    function pendingFor(name) {
      return Object.keys(pending).map(function (id) { return pending[id]; })
        .filter(function (p) { return p.filename === name; })
        .sort(function (a, b) { return a.id - b.id; });
    }

    function paintMarks() {
      root.querySelectorAll("a[data-file]").forEach(function (link) {
        link.querySelector("[data-pending-mark]").hidden = !hasPending(link.getAttribute("data-file"));
        link.toggleAttribute("aria-current", !!(active && active.name === link.getAttribute("data-file")));
        if (link.hasAttribute("aria-current")) link.setAttribute("aria-current", "true");
      });
      Object.keys(tabs).forEach(function (name) { paintTab(tabs[name]); });
    }

    function paintTab(tab) {
      var isDirty = dirty(tab);
      tab.el.toggleAttribute("data-dirty", isDirty);
      tab.el.classList.toggle("drafts-tab--active", tab === active);
      tab.nameButton.setAttribute("aria-selected", String(tab === active));
      tab.mark.hidden = !hasPending(tab.name);
      tab.closeButton.textContent = isDirty ? "●" : "×";
      tab.closeButton.title = isDirty ? "Unsaved changes: save and close" : "Close";
      tab.closeButton.setAttribute("aria-label", (isDirty ? "Save and close " : "Close ") + tab.name);
      // The only tab is not closed, but its control still says it is unsaved.
      tab.closeButton.hidden = Object.keys(tabs).length < 2 && !isDirty;
      if (tab === active) saveButton.disabled = !isDirty;
    }

    function makeTab(name) {
      var tab = { name: name, doc: null, hash: "", clean: 0, review: null, view: "file", ready: null };
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
      tabsEl.appendChild(tab.el);
      tabs[name] = tab;
      return tab;
    }

    function openTab(name) {
      var tab = tabs[name] || makeTab(name);
      if (!tab.ready) {
        tab.ready = request(D.urlFile + "?name=" + encodeURIComponent(name)).then(function (r) {
          if (!r.ok) {
            tab.el.remove();
            delete tabs[name];
            say(r.data.error || "Could not open " + name + ".", "error");
            return null;
          }
          tab.doc = window.CodeMirror.Doc(r.data.text, modeFor(name));
          tab.hash = r.data.hash;
          tab.clean = tab.doc.changeGeneration(true);
          tab.doc.on("change", function () { paintTab(tab); });
          r.data.proposals.forEach(function (p) { pending[p.id] = p; });
          paintMarks();
          return tab;
        });
      }
      return tab.ready;
    }

    function closeTab(tab) {
      var go = dirty(tab) ? save(tab) : Promise.resolve(true);
      go.then(function (saved) {
        if (!saved || Object.keys(tabs).length < 2) return;
        var names = Object.keys(tabs);
        tab.el.remove();
        delete tabs[tab.name];
        if (tab === active) {
          active = null;
          var next = names[names.indexOf(tab.name) + 1] || names[names.indexOf(tab.name) - 1];
          if (next) activate(next);
        }
        paintMarks();
      });
    }

    function activate(name) {
      return openTab(name).then(function (tab) {
        if (!tab) return null;
        var switched = active !== tab;
        active = tab;
        show(tab);
        if (switched) {
          document.querySelectorAll("[data-chat-file]").forEach(function (input) { input.value = name; });
          // Forms that come back to the editor (rename, keep, the chat's first
          // message) come back to this file.
          document.querySelectorAll("input[data-next]").forEach(function (input) {
            input.value = D.urlEditor + "?file=" + encodeURIComponent(name);
          });
          window.history.replaceState(null, "", D.urlEditor + "?file=" + encodeURIComponent(name));
          if (compileButton) compileButton.hidden = !isTex(name);
          if (exportButton) exportButton.hidden = !isMarkdown(name);
          buildStatus.textContent = "";
          saveStatus.textContent = "";
          previewView = builds[name] && builds[name].ok && builds[name].kind === "compile" ? "pdf" : "text";
          showBuild();
          refreshPreview();
          loadHistory();
        }
        paintMarks();
        return tab;
      });
    }

    // Put the tab's file (or its review) in the editor.
    function show(tab) {
      var inReview = tab.view === "review" && !!tab.review;
      if (!inReview) previewDuringReview = false;
      root.toggleAttribute("data-reviewing", inReview);
      layout();
      if (inReview && (!tab.review.doc || tab.review.wide !== isWide())) tab.review.render(isWide());
      var doc = inReview ? tab.review.doc : tab.doc;
      if (cm.getDoc() !== doc) cm.swapDoc(doc);
      cm.setOption("readOnly", inReview ? true : false);
      cm.setOption("lineNumbers", !inReview);
      cm.setOption("extraKeys", !inReview && isMarkdown(tab.name) ? { Enter: "newlineAndIndentContinueMarkdownList" } : null);
      paintReviewBar(tab);
      paintOffer(tab);
      cm.refresh();
    }

    function isWide() { return editorEl.clientWidth >= Review.WIDE_PX; }

    function refreshReviewWidth() {
      if (active && reviewing()) show(active);
    }

    // --- Saving ----------------------------------------------------------------

    function save(tab) {
      if (!tab || !tab.doc) return Promise.resolve(false);
      if (!dirty(tab)) return Promise.resolve(true);
      if (tab.saving) return tab.saving;
      var generation = tab.doc.changeGeneration(true);
      var text = tab.doc.getValue();
      saveStatus.textContent = "Saving…";
      tab.saving = request(D.urlSave, { method: "POST", body: { name: tab.name, text: text, hash: tab.hash } })
        .then(function (r) {
          tab.saving = null;
          if (!r.ok) {
            saveStatus.textContent = "Not saved";
            say(r.data.error || "Could not save " + tab.name + ".", "error");
            paintTab(tab);
            return false;
          }
          tab.hash = r.data.hash;
          tab.clean = generation;
          saveStatus.textContent = "Saved " + new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
          if (messageEl.classList.contains("alert--error")) say("");
          paintTab(tab);
          if (tab === active) loadHistory();
          return true;
        });
      return tab.saving;
    }

    function saveAll() {
      var names = Object.keys(tabs).filter(function (name) { return dirty(tabs[name]); });
      return Promise.all(names.map(function (name) { return save(tabs[name]); }))
        .then(function (results) { return results.every(Boolean); });
    }

    // The person's save: write, then re-render the preview of what was written.
    function saveActive() {
      if (!active) return;
      save(active).then(function (ok) { if (ok) refreshPreview(); });
    }

    saveButton.addEventListener("click", saveActive);
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

    // --- History -------------------------------------------------------------------

    function loadHistory() {
      if (!historyEl.open || !active) return;
      var tab = active;
      root.querySelector("[data-history-file]").textContent = tab.name;
      request(D.urlHistory + "?name=" + encodeURIComponent(tab.name)).then(function (r) {
        if (tab !== active) return;
        historyList.textContent = "";
        if (!r.ok) {
          say(r.data.error || "Could not load the history.", "error");
          return;
        }
        if (!r.data.snapshots.length) {
          var none = document.createElement("li");
          none.className = "small muted";
          none.textContent = "No earlier versions yet: each save keeps the text it replaces.";
          historyList.appendChild(none);
        }
        r.data.snapshots.forEach(function (snapshot) {
          var item = document.createElement("li");
          item.setAttribute("data-snapshot", snapshot.id);
          var what = document.createElement("span");
          var when = document.createElement("time");
          when.dateTime = snapshot.created_at;
          when.textContent = new Date(snapshot.created_at).toLocaleString([], {
            day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit"
          });
          what.appendChild(when);
          var detail = document.createElement("span");
          detail.className = "small muted";
          detail.textContent = " " + snapshot.reason + " · " + snapshot.chars + " characters";
          what.appendChild(detail);
          var button = document.createElement("button");
          button.type = "button";
          button.className = "button button--small";
          button.textContent = "Restore";
          button.setAttribute("data-testid", "restore");
          button.addEventListener("click", function () { restore(tab, snapshot); });
          item.appendChild(what);
          item.appendChild(button);
          historyList.appendChild(item);
        });
      });
    }

    historyEl.addEventListener("toggle", loadHistory);

    // Put text that is now on disk into a tab: one undoable change, then clean.
    function reload(tab, text, hash) {
      if (tab.doc.getValue() !== text) {
        var cursor = tab.doc.getCursor();
        tab.doc.setValue(text);
        tab.doc.setCursor(cursor);
      }
      tab.hash = hash;
      tab.clean = tab.doc.changeGeneration(true);
      paintTab(tab);
    }

    function restore(tab, snapshot) {
      if (dirty(tab) && !window.confirm("Restoring replaces your unsaved changes to " + tab.name + ". Restore anyway?")) return;
      request(fill(D.urlRestore, snapshot.id), { method: "POST", body: {} }).then(function (r) {
        if (!r.ok) {
          say(r.data.error || "Could not restore that version.", "error");
          return;
        }
        reload(tab, r.data.text, r.data.hash);
        if (tab === active) {
          refreshPreview();
          loadHistory();
        }
        say("Restored " + tab.name + " as it was " + new Date(snapshot.created_at).toLocaleString() +
          ". The text it replaced is in History.", "success");
      });
    }

    // --- Suggestions: offers, reviews, applying ------------------------------------

    function paintOffer(tab) {
      offerEl.textContent = "";
      var list = tab && tab.view === "file" ? pendingFor(tab.name) : [];
      offerEl.hidden = !list.length;
      list.forEach(function (p) {
        var line = document.createElement("span");
        line.className = "drafts-offer__item";
        var text = document.createElement("span");
        var count = p.changes ? p.changes + " change" + (p.changes === 1 ? "" : "s") : "changes";
        text.textContent = "✎ The assistant suggested " + count + " to " + p.filename + ".";
        var button = document.createElement("button");
        button.type = "button";
        button.className = "button button--small button--primary";
        button.setAttribute("data-testid", "review-suggestion");
        var resumed = tab.review && tab.review.proposal.id === p.id;
        button.textContent = resumed ? "Back to the review" : "Review suggestion";
        button.addEventListener("click", function () { openReview(p.id); });
        line.appendChild(text);
        line.appendChild(button);
        offerEl.appendChild(line);
      });
    }

    function paintReviewBar(tab) {
      var review = tab.view === "review" ? tab.review : null;
      reviewBar.hidden = !review;
      if (!review) return;
      reviewBar.querySelector("[data-review-title]").textContent = "Suggested changes to " + tab.name;
      reviewBar.querySelector("[data-review-progress]").textContent =
        review.answered() + " of " + review.total() + " answered";
      var warning = reviewBar.querySelector("[data-review-warning]");
      var stale = review.conflict || (tab.hash !== review.proposal.base_hash
        ? tab.name + " has changed since this suggestion was made, so it can no longer be applied. Discard it and ask again."
        : "");
      warning.textContent = stale;
      warning.hidden = !stale;
      reviewBar.toggleAttribute("data-busy", !!review.applying);
    }

    function openReview(id) {
      id = Number(id);
      return request(fill(D.urlProposal, id)).then(function (r) {
        if (!r.ok) {
          say(r.data.error || "Could not open that suggestion.", "error");
          return;
        }
        var proposal = r.data;
        if (proposal.status !== "pending") {
          delete pending[proposal.id];
          paintMarks();
          if (active) paintOffer(active);
          say("That suggestion was already " + (proposal.status === "applied" ? "applied" : "discarded") + ".", "info");
          return;
        }
        pending[proposal.id] = { id: proposal.id, filename: proposal.filename, changes: proposal.changes };
        return activate(proposal.filename).then(function (tab) {
          if (!tab) return;
          if (!tab.review || tab.review.proposal.id !== proposal.id) {
            tab.review = new Review(proposal, {
              mode: modeFor(tab.name),
              onChange: function (review) { answered(tab, review); }
            });
          }
          tab.view = "review";
          show(tab);
          cm.scrollIntoView({ line: tab.review.firstLine, ch: 0 }, 80);
        });
      });
    }

    function answered(tab, review) {
      review.conflict = "";
      if (tab === active) paintReviewBar(tab);
      if (review.complete()) apply(tab, review);
    }

    function finishReview(tab, proposalId) {
      delete pending[proposalId];
      tab.review = null;
      tab.view = "file";
      if (tab === active) {
        show(tab);
        refreshPreview();
        loadHistory();
      }
      paintMarks();
    }

    function apply(tab, review) {
      if (review.applying) return;
      review.applying = true;
      paintReviewBar(tab);
      var id = review.proposal.id;
      var accepted = review.accepted();
      var wasDirty = dirty(tab);
      request(fill(D.urlApply, id), { method: "POST", body: { accepted: accepted } }).then(function (r) {
        review.applying = false;
        if (!r.ok) {
          review.conflict = r.data.error || "The suggestion could not be applied.";
          say(review.conflict, "error");
          if (tab === active) paintReviewBar(tab);
          return;
        }
        reload(tab, r.data.text, r.data.hash);
        finishReview(tab, id);
        if (r.data.status === "applied") {
          say("Applied " + accepted.length + " of " + review.total() + " changes to " + tab.name +
            ". The text before is in History." +
            (wasDirty ? " Your unsaved edits were replaced; Ctrl+Z brings them back." : ""), "success");
        } else {
          say("No change accepted: the suggestion was discarded and nothing was written.", "info");
        }
      });
    }

    function discard(tab) {
      var id = tab.review.proposal.id;
      request(fill(D.urlDiscard, id), { method: "POST", body: {} }).then(function (r) {
        if (!r.ok) {
          say(r.data.error || "Could not discard the suggestion.", "error");
          return;
        }
        finishReview(tab, id);
        say("Suggestion discarded; nothing was written.", "info");
      });
    }

    reviewBar.querySelectorAll("[data-review-all]").forEach(function (button) {
      button.addEventListener("click", function () {
        if (active && active.review) active.review.answerAll(button.getAttribute("data-review-all"));
      });
    });
    reviewBar.querySelector("[data-review-discard]").addEventListener("click", function () {
      if (active && active.review) discard(active);
    });
    reviewBar.querySelector("[data-review-close]").addEventListener("click", function () {
      if (!active) return;
      active.view = "file";
      show(active);
    });

    // What is waiting for each file, asked again: a suggestion made while the
    // socket was not yet (or no longer) connected was never announced.
    function refreshPending() {
      root.querySelectorAll("a[data-file]").forEach(function (link) {
        var name = link.getAttribute("data-file");
        request(D.urlFile + "?name=" + encodeURIComponent(name)).then(function (r) {
          if (!r.ok) return;
          Object.keys(pending).forEach(function (id) {
            if (pending[id].filename === name) delete pending[id];
          });
          r.data.proposals.forEach(function (p) { pending[p.id] = p; });
          paintMarks();
          if (active) paintOffer(active);
        });
      });
    }

    // New suggestions arrive over the draft's socket while the editor is open.
    function listen(delay) {
      var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      var socket = new WebSocket(scheme + window.location.host + "/ws/drafts/" + D.draft + "/");
      socket.addEventListener("open", function () {
        delay = 1000;
        refreshPending();
      });
      socket.addEventListener("message", function (event) {
        var data = JSON.parse(event.data);
        if (data.event !== "proposal") return;
        pending[data.proposal_id] = { id: data.proposal_id, filename: data.filename, changes: 0 };
        paintMarks();
        if (active) paintOffer(active);
        request(fill(D.urlProposal, data.proposal_id)).then(function (r) {
          if (!r.ok || !pending[data.proposal_id]) return;
          pending[data.proposal_id].changes = r.data.changes;
          if (active) paintOffer(active);
        });
      });
      socket.addEventListener("close", function (event) {
        // 44xx: signed out or not this person's draft; anything else: try again.
        if (event.code >= 4400 && event.code < 4500) return;
        window.setTimeout(function () { listen(Math.min(delay * 2, 30000)); }, delay);
      });
    }

    // A review link in the chat panel opens the review here instead of reloading.
    document.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("a[href]") : null;
      if (!link || !chatPane.contains(link) || event.ctrlKey || event.metaKey || event.shiftKey) return;
      var url = new URL(link.href, window.location.href);
      if (url.origin !== window.location.origin || url.pathname !== D.urlEditor) return;
      event.preventDefault();
      var proposal = url.searchParams.get("proposal");
      var file = url.searchParams.get("file");
      if (proposal) openReview(proposal);
      else if (file && root.querySelector('a[data-file="' + window.CSS.escape(file) + '"]')) activate(file);
    });

    // --- Preview and scroll sync ---------------------------------------------------

    function refreshPreview() {
      if (!active) return;
      previewName.textContent = active.name;
      previewVersion += 1;
      anchors = null;
      previewFrame.setAttribute("data-preview-file", active.name);
      previewFrame.src = D.urlPreview + "?name=" + encodeURIComponent(active.name) + "&v=" + previewVersion;
    }

    // Where each source line's block sits in the frame, tagged with its file so
    // a tab switch cannot scroll one file's preview to another's lines.
    function measureAnchors() {
      var doc = previewFrame.contentDocument;
      var win = previewFrame.contentWindow;
      var file = previewFrame.getAttribute("data-preview-file");
      if (!doc || !doc.body || !win || !file) return;
      var list = [];
      doc.querySelectorAll("[data-line]").forEach(function (node) {
        var line = parseInt(node.getAttribute("data-line"), 10);
        if (!isNaN(line)) list.push({ line: line, top: node.getBoundingClientRect().top + win.scrollY });
      });
      list.sort(function (a, b) { return a.line - b.line || a.top - b.top; });
      anchors = { file: file, list: list, height: doc.documentElement.scrollHeight };
    }

    function syncPreview() {
      if (!active || reviewing() || !anchors || anchors.file !== active.name || !isMarkdown(active.name)) return;
      if (effectiveSide() !== "preview" || previewView !== "text") return;
      var win = previewFrame.contentWindow;
      if (!win) return;
      var info = cm.getScrollInfo();
      if (info.top + info.clientHeight >= info.height - 2) {
        win.scrollTo(0, anchors.height);
        return;
      }
      var line = cm.lineAtHeight(info.top, "local");
      var lineTop = cm.heightAtLine(line, "local");
      var lineHeight = cm.getLineHandle(line).height || 1;
      var position = line + Math.max(0, Math.min(1, (info.top - lineTop) / lineHeight));
      var before = { line: 0, top: 0 };
      var after = { line: cm.lineCount(), top: anchors.height };
      for (var i = 0; i < anchors.list.length; i++) {
        if (anchors.list[i].line <= position) {
          before = anchors.list[i];
        } else {
          after = anchors.list[i];
          break;
        }
      }
      var span = after.line - before.line;
      var y = before.top + (span > 0 ? (position - before.line) / span : 0) * (after.top - before.top);
      win.scrollTo(0, Math.max(0, y - 8));
    }

    // On scroll, and on updates too: line heights are estimates until the lines
    // are drawn, so the top line can change after the scroll that moved it.
    var syncQueued = false;
    function queueSync() {
      if (syncQueued) return;
      syncQueued = true;
      window.requestAnimationFrame(function () {
        syncQueued = false;
        syncPreview();
      });
    }
    cm.on("scroll", queueSync);
    cm.on("update", queueSync);
    previewFrame.addEventListener("load", function () {
      measureAnchors();
      syncPreview();
    });

    var resizeTimer = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(resizeTimer);
      resizeTimer = window.setTimeout(function () {
        refreshReviewWidth();
        measureAnchors();
        syncPreview();
      }, 150);
    });

    // --- Compile and export ------------------------------------------------------

    function showBuild() {
      var result = active ? builds[active.name] : null;
      var hasPdf = !!(result && result.ok && result.kind === "compile");
      pdfViews.hidden = !hasPdf;
      if (!hasPdf) previewView = "text";
      previewFrame.hidden = previewView !== "text";
      pdfFrame.hidden = previewView !== "pdf";
      pdfViews.querySelectorAll("[data-preview-view]").forEach(function (button) {
        button.setAttribute("aria-pressed", String(button.getAttribute("data-preview-view") === previewView));
      });
      if (hasPdf && pdfFrame.getAttribute("data-url") !== result.url) {
        pdfFrame.setAttribute("data-url", result.url);
        pdfFrame.src = result.url;
      }
      buildOutput.textContent = "";
      buildOutput.hidden = !result;
      if (!result) return;
      if (result.ok) {
        // Browsers may refuse to show a PDF in a frame this sandboxed (Chromium
        // does): the download is always offered beside it.
        var line = document.createElement("p");
        line.textContent = (result.kind === "compile" ? "Compiled" : "PDF exported") + " in " + result.seconds + " s. ";
        var link = document.createElement("a");
        link.href = result.url + (result.kind === "compile" ? "&download=1" : "");
        link.setAttribute("download", "");
        link.setAttribute("data-testid", "download-pdf");
        link.textContent = "Download the PDF";
        line.appendChild(link);
        buildOutput.appendChild(line);
        return;
      }
      var error = document.createElement("p");
      error.className = "drafts-build__error";
      error.textContent = (result.kind === "compile" ? "Compiling failed" : "Exporting failed") +
        (result.error ? ": " + result.error : ".");
      buildOutput.appendChild(error);
      if (result.log) {
        var details = document.createElement("details");
        details.open = true;
        var summary = document.createElement("summary");
        summary.textContent = "Log";
        var pre = document.createElement("pre");
        pre.textContent = result.log;
        details.appendChild(summary);
        details.appendChild(pre);
        buildOutput.appendChild(details);
      }
    }

    pdfViews.querySelectorAll("[data-preview-view]").forEach(function (button) {
      button.addEventListener("click", function () {
        previewView = button.getAttribute("data-preview-view");
        showBuild();
        if (previewView === "text") measureAnchors();
      });
    });

    function build(kind, button) {
      var tab = active;
      if (!tab || button.disabled) return;
      button.disabled = true;
      // Save first, so the build never runs on text older than the screen.
      save(tab).then(function (saved) {
        if (!saved) {
          button.disabled = false;
          return;
        }
        var started = Date.now();
        var label = kind === "compile" ? "Compiling… " : "Exporting… ";
        function tick() { buildStatus.textContent = label + Math.floor((Date.now() - started) / 1000) + " s"; }
        tick();
        var timer = window.setInterval(tick, 250);
        var url = kind === "compile" ? D.urlCompile : D.urlExport;
        request(url, { method: "POST", body: { name: tab.name } }).then(function (r) {
          window.clearInterval(timer);
          button.disabled = false;
          var result = r.ok ? r.data : { ok: false, error: r.data.error || "", log: "", seconds: 0 };
          result.kind = kind;
          builds[tab.name] = result;
          buildStatus.textContent = result.ok
            ? (kind === "compile" ? "Compiled" : "Exported") + " in " + result.seconds + " s"
            : "";
          if (tab !== active) return;
          if (result.ok && kind === "compile") previewView = "pdf";
          if (effectiveSide() !== "preview") {
            side = "preview";
            previewDuringReview = reviewing();
            layout();
          }
          showBuild();
        });
      });
    }

    if (compileButton) compileButton.addEventListener("click", function () { build("compile", compileButton); });
    if (exportButton) exportButton.addEventListener("click", function () { build("export", exportButton); });

    // --- Files list and the chat panel -------------------------------------------

    root.querySelectorAll("a[data-file]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        if (event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        activate(link.getAttribute("data-file"));
      });
    });

    // The assistant reads the file from disk: unsaved text is saved before a
    // message goes, so it sees what the person sees (and a new chat, which
    // reloads the page, loses nothing).
    document.addEventListener("htmx:confirm", function (event) {
      if (event.detail.elt !== composer || !anyDirty()) return;
      event.preventDefault();
      saveAll().then(function (ok) {
        if (ok) event.detail.issueRequest(true);
      });
    });

    // Keep the newest reply in view while it streams, unless the reader scrolled up.
    var pinned = true;
    chatMessages.addEventListener("scroll", function () {
      pinned = chatMessages.scrollTop + chatMessages.clientHeight >= chatMessages.scrollHeight - 80;
    });
    new MutationObserver(function () {
      if (pinned) chatMessages.scrollTop = chatMessages.scrollHeight;
    }).observe(chatMessages, { childList: true, subtree: true, characterData: true });

    // --- Start ---------------------------------------------------------------------

    JSON.parse(document.getElementById("drafts-pending").textContent).forEach(function (p) {
      pending[p.id] = p;
    });
    layout();
    listen(1000);
    if (D.opened) {
      activate(D.opened).then(function () {
        if (D.proposal) openReview(D.proposal);
      });
    } else {
      say("This draft has no files yet: add one on the left.", "info");
    }
  }

  document.addEventListener("DOMContentLoaded", init);
})();
