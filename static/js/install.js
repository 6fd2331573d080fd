// Registers the service worker that makes Jarvis installable and shows the
// offline page when the server cannot be reached (static/js/sw.js, served at
// the URL in this script tag's data-worker by apps/core/webapp.py). The
// worker caches the static shell only, never a page: docs/deploy.md,
// "Installing Jarvis as an app". An ES module: a module has no
// document.currentScript, so the tag is found by its data-worker.

const script = document.querySelector("script[data-worker]");
const workerUrl = script && script.getAttribute("data-worker");

function register() {
  navigator.serviceWorker.register(workerUrl, { scope: "/" }).catch(function (error) {
    // Not being installable is no reason to break the page.
    console.warn("Jarvis: the offline support did not start:", error);
  });
}

// Service workers exist only on a secure origin (https, or localhost); on
// a plain-http LAN install the site simply works without one.
if (workerUrl && "serviceWorker" in navigator && window.isSecureContext) {
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register);
}
