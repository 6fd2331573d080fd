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

  // A form marked data-autosubmit sends itself when its select changes (its
  // submit button stays for a page without JavaScript).
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-autosubmit] button[type=submit]").forEach(function (b) {
      b.remove();
    });
  });
  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("form[data-autosubmit]");
    if (form && event.target.tagName === "SELECT") form.requestSubmit();
  });

  // A Copy button copies the text of the element its data-copy names (a
  // reply's Markdown waits in a hidden textarea; a public key in a <pre>),
  // and says when it is done.
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    function said(text) {
      button.textContent = text;
      setTimeout(function () { button.textContent = label; }, 1500);
    }
    if (!navigator.clipboard) { said("Copy failed"); return; }
    var text = "value" in source ? source.value : source.textContent;
    navigator.clipboard.writeText(text.trim()).then(
      function () { said("Copied"); },
      function () { said("Copy failed"); }
    );
  });
})();
