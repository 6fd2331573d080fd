// Small behaviours for the whole shell. No inline script anywhere (CSP).
(function () {
  "use strict";

  function setLive(state, text) {
    var el = document.getElementById("live-status");
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
    el.title = "Live updates: " + text.toLowerCase();
  }

  // The ping socket's first frame swaps in a "Live" badge; when the socket
  // drops (server restart, sign-out elsewhere) say so until it reconnects.
  document.addEventListener("htmx:wsClose", function () { setLive("offline", "Offline"); });
  document.addEventListener("htmx:wsError", function () { setLive("offline", "Offline"); });
})();
