// New suggestions arriving while the editor is open, over the draft's
// socket: each is marked (✎) and offered at once, its change count fetched.
//
// Exports: listen(delay) - connect, and reconnect with backoff up to 30 s.
import { page, state } from "./state.js";
import { fill, request } from "./http.js";
import { paintMarks } from "./marks.js";
import { paintOffer } from "./review-bar.js";

// What is waiting for each file, asked again: a suggestion made while the
// socket was not yet (or no longer) connected was never announced.
function refreshPending() {
  page.root.querySelectorAll("a[data-file]").forEach(function (link) {
    const name = link.getAttribute("data-file");
    request(page.urls.urlFile + "?name=" + encodeURIComponent(name)).then(function (r) {
      if (!r.ok) return;
      Object.keys(state.pending).forEach(function (id) {
        if (state.pending[id].filename === name) delete state.pending[id];
      });
      r.data.proposals.forEach(function (p) { state.pending[p.id] = p; });
      paintMarks();
      if (state.active) paintOffer(state.active);
    });
  });
}

export function listen(delay) {
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + window.location.host + "/ws/drafts/" + page.urls.draft + "/");
  socket.addEventListener("open", function () {
    delay = 1000;
    refreshPending();
  });
  socket.addEventListener("message", function (event) {
    const data = JSON.parse(event.data);
    if (data.event !== "proposal") return;
    state.pending[data.proposal_id] = { id: data.proposal_id, filename: data.filename, changes: 0 };
    paintMarks();
    if (state.active) paintOffer(state.active);
    request(fill(page.urls.urlProposal, data.proposal_id)).then(function (r) {
      if (!r.ok || !state.pending[data.proposal_id]) return;
      state.pending[data.proposal_id].changes = r.data.changes;
      if (state.active) paintOffer(state.active);
    });
  });
  socket.addEventListener("close", function (event) {
    // 44xx: signed out or not this person's draft; anything else: try again.
    if (event.code >= 4400 && event.code < 4500) return;
    window.setTimeout(function () { listen(Math.min(delay * 2, 30000)); }, delay);
  });
}
