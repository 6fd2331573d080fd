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

  // Notices arrive as toasts over the same socket; a reconnect sends the
  // undismissed ones again, so a toast already shown is not shown twice.
  document.addEventListener("DOMContentLoaded", function () {
    var toasts = document.getElementById("toasts");
    if (!toasts || !window.MutationObserver) return;
    new MutationObserver(function () {
      var seen = {};
      Array.prototype.forEach.call(toasts.children, function (toast) {
        if (seen[toast.id]) toast.remove(); else seen[toast.id] = true;
      });
    }).observe(toasts, { childList: true });
  });
})();
