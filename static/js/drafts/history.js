// The history panel: earlier versions of the active file (each save, restore
// and accepted suggestion keeps the text it replaced), and restoring one.
//
// Exports:
//   loadHistory()            list the active file's versions, if the panel is open
//   reload(tab, text, hash)  put text the server wrote (a restore, an accepted
//                            suggestion) into a tab, undoably
//   historyStart()           load the list whenever the panel opens
import { dirty, page, state } from "./state.js";
import { fill, request } from "./http.js";
import { dayAndTime } from "./clock.js";
import { say } from "./message.js";
import { paintTab } from "./marks.js";
import { refreshPreview } from "./preview.js";

export function loadHistory() {
  if (!page.historyEl.open || !state.active) return;
  const tab = state.active;
  const historyList = page.historyList;
  page.root.querySelector("[data-history-file]").textContent = tab.name;
  request(page.urls.urlHistory + "?name=" + encodeURIComponent(tab.name)).then(function (r) {
    if (tab !== state.active) return;
    historyList.textContent = "";
    if (!r.ok) {
      say(r.data.error || "Could not load the history.", "error");
      return;
    }
    if (!r.data.snapshots.length) {
      const none = document.createElement("li");
      none.className = "small muted";
      none.textContent = "No earlier versions yet: each save keeps the text it replaces.";
      historyList.appendChild(none);
    }
    r.data.snapshots.forEach(function (snapshot) {
      const item = document.createElement("li");
      item.setAttribute("data-snapshot", snapshot.id);
      const what = document.createElement("span");
      const when = document.createElement("time");
      when.dateTime = snapshot.created_at;
      when.textContent = dayAndTime(snapshot.created_at, true);
      what.appendChild(when);
      const detail = document.createElement("span");
      detail.className = "small muted";
      detail.textContent = " " + snapshot.reason + " · " + snapshot.chars + " characters";
      what.appendChild(detail);
      const button = document.createElement("button");
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

// Put text that is now on disk into a tab: one undoable change, then clean.
export function reload(tab, text, hash) {
  if (tab.doc.getValue() !== text) {
    const cursor = tab.doc.getCursor();
    tab.doc.setValue(text);
    tab.doc.setCursor(cursor);
  }
  tab.hash = hash;
  tab.clean = tab.doc.changeGeneration(true);
  paintTab(tab);
}

function restore(tab, snapshot) {
  if (dirty(tab) && !window.confirm("Restoring replaces your unsaved changes to " + tab.name + ". Restore anyway?")) return;
  request(fill(page.urls.urlRestore, snapshot.id), { method: "POST", body: {} }).then(function (r) {
    if (!r.ok) {
      say(r.data.error || "Could not restore that version.", "error");
      return;
    }
    reload(tab, r.data.text, r.data.hash);
    if (tab === state.active) {
      refreshPreview();
      loadHistory();
    }
    say("Restored " + tab.name + " as it was " + dayAndTime(snapshot.created_at) +
      ". The text it replaced is in History.", "success");
  });
}

export function historyStart() {
  page.historyEl.addEventListener("toggle", loadHistory);
}
