// Jarvis's service worker, served at /sw.js by apps/core/webapp.py, which
// puts one line before this file: self.JARVIS_SHELL = {cache, shell, offline,
// static}, this deploy's cache name and the URLs of the static shell.
//
// What it stores: the static shell (CSS, scripts, icons) and the offline
// page, nothing else. Pages and every other response with someone's data in
// it (notes, chats, settings, htmx fragments, API answers) are never cached:
// a navigation goes to the network and, when the server cannot be reached,
// the offline page answers instead. So a second person signing in on the
// same device, or anyone after sign-out, finds nothing of the first person
// in the browser's cache: the cache only ever held files that are the same
// for everyone. Requests that are not navigations and not shell files are
// left to the browser (this worker does not answer them).
//
// The cache name changes with every deploy that changes a shell file or this
// worker; the new worker fills its own cache and drops the old ones.
"use strict";

const CONFIG = self.JARVIS_SHELL;

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(CONFIG.cache)
      .then(function (cache) {
        // The offline page is fetched without cookies: it is the same for
        // everyone, and this way nothing tied to a session could end up here.
        const requests = CONFIG.shell.map(function (url) {
          return new Request(url, { credentials: "omit", cache: "reload" });
        });
        return cache.addAll(requests);
      })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys()
      .then(function (names) {
        return Promise.all(names.map(function (name) {
          if (name.indexOf("jarvis-shell-") === 0 && name !== CONFIG.cache) return caches.delete(name);
          return null;
        }));
      })
      .then(function () { return self.clients.claim(); })
  );
});

function isShellFile(url) {
  return url.origin === self.location.origin
    && url.pathname.indexOf(CONFIG.static) === 0
    && CONFIG.shell.indexOf(url.pathname) !== -1;
}

self.addEventListener("fetch", function (event) {
  const request = event.request;
  if (request.method !== "GET") return;
  if (request.mode === "navigate") {
    // Network only: the answer is never stored. Only a failure to reach the
    // server (fetch rejects) brings the offline page; an error page the
    // server sends (404, 500) is shown as it is.
    event.respondWith(
      fetch(request).catch(function () {
        return caches.open(CONFIG.cache).then(function (cache) {
          return cache.match(CONFIG.offline);
        }).then(function (page) {
          return page || Response.error();
        });
      })
    );
    return;
  }
  const url = new URL(request.url);
  if (!isShellFile(url)) return;
  event.respondWith(
    caches.open(CONFIG.cache).then(function (cache) {
      return cache.match(url.pathname).then(function (hit) {
        return hit || fetch(request);
      });
    })
  );
});
