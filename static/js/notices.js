// Notices (apps/core/notices.py): toasts that arrive over the live socket
// into #toasts, and the header's bell.
//
// - A toast whose id is already on the page is the same group grown (or sent
//   again on reconnect): the newer copy replaces the older in place.
// - A page that lists rows declares it with data-notice-rows on the list; a
//   notice whose url a row of such a list names (data-notice-row) or links
//   to, or that is the page itself, is
//   already shown by the page, so it is marked seen and not shown as a toast
//   (a group loses just those notices).
// - A toast that is not a failure submits its own Dismiss after a few seconds
//   (the server marks it seen, so it does not come back); pointing at it or
//   focusing it holds it. A failure stays until closed.
// - The bell is a <details>: Enter/Space open it; Escape or a click elsewhere closes it.

const TOAST_SECONDS = 8;

function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch (error) {
    return "";
  }
}

function markSeen(url, ids) {
  if (!ids.length) return;
  const body = new FormData();
  ids.forEach((id) => body.append("ids", id));
  fetch(url, { method: "POST", body, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
    .then((response) => (response.ok ? response.text() : ""))
    .then((html) => {
      // The answer is the bell's count and list: put them in place.
      const fresh = new DOMParser().parseFromString(html, "text/html");
      ["bell-count", "bell-list"].forEach((id) => {
        const now = fresh.getElementById(id);
        const old = document.getElementById(id);
        if (now && old) { now.removeAttribute("hx-swap-oob"); old.replaceWith(now); }
      });
    })
    .catch(() => {});
}

function shownByPage(key) {
  if (!key) return false;
  // The thing's own page (a document's) shows its state itself.
  if (window.location.pathname === key) return true;
  // A row names its thing by data-notice-row, or links to it.
  const rows = document.querySelectorAll("[data-notice-rows] [data-notice-row], [data-notice-rows] a[href]");
  return Array.from(rows).some(
    (row) => (row.dataset.noticeRow || row.getAttribute("href")) === key,
  );
}

// Drop the notices the page already shows; false when none is left to show.
function withoutOwnRows(toast) {
  const items = Array.from(toast.querySelectorAll("[data-notice-item]"));
  const own = items.filter((item) => shownByPage(item.dataset.noticeKey));
  if (!own.length) return true;
  const ids = own.map((item) => item.querySelector("input[name=ids]").value);
  markSeen(toast.getAttribute("hx-post"), ids);
  own.forEach((item) => item.remove());
  const left = Array.from(toast.querySelectorAll("[data-notice-item]"));
  if (!left.length) return false;
  const heading = toast.querySelector("[data-toast-heading]");
  const first = left[0].querySelector("[data-notice-sep]");
  if (first) first.textContent = "";
  if (!heading) return true;
  if (left.length > 1) {
    heading.textContent = toast.dataset.heading.replace("{n}", String(left.length)) + ": ";
  } else {
    // One left: its own sentence, as a toast of one says it.
    heading.textContent = left[0].dataset.text + " ";
    const link = left[0].querySelector("a");
    if (link) link.textContent = "Open it";
  }
  return true;
}

function autoDismiss(toast) {
  if (toast.jarvisTimed || toast.classList.contains("toast--error")) return;
  const close = toast.querySelector(".toast__close");
  if (!close) return;
  toast.jarvisTimed = true;
  let timer = null;
  const start = () => { timer = setTimeout(() => close.click(), TOAST_SECONDS * 1000); };
  const hold = () => clearTimeout(timer);
  toast.addEventListener("mouseenter", hold);
  toast.addEventListener("focusin", hold);
  toast.addEventListener("mouseleave", start);
  toast.addEventListener("focusout", start);
  start();
}

function arrived(toasts, toast) {
  if (toast.jarvisChecked) return;
  toast.jarvisChecked = true;
  const older = Array.from(toasts.children).find((other) => other !== toast && other.id === toast.id);
  if (!withoutOwnRows(toast)) {
    toast.remove();
    if (older) older.remove();
    return;
  }
  if (older) older.replaceWith(toast);
  autoDismiss(toast);
}

function watchToasts() {
  const toasts = document.getElementById("toasts");
  if (!toasts) return;
  new MutationObserver(() => {
    Array.from(toasts.children).forEach((toast) => arrived(toasts, toast));
  }).observe(toasts, { childList: true });
}

function watchBell() {
  const bell = document.querySelector("[data-bell]");
  if (!bell) return;
  bell.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && bell.open) {
      bell.open = false;
      bell.querySelector("summary").focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (bell.open && !bell.contains(event.target)) bell.open = false;
  });
}

watchToasts();
watchBell();
