// Small behaviours for the whole shell. No inline script anywhere (CSP).

function setLive(state, text) {
  const el = document.getElementById("live-status");
  if (!el) return;
  el.dataset.state = state;
  el.textContent = text;
  el.title = "Live updates: " + text.toLowerCase();
}

// The ping socket's first frame swaps in a "Live" badge; when the socket
// drops (server restart, sign-out elsewhere) say so until it reconnects.
document.addEventListener("htmx:wsClose", function () { setLive("offline", "Offline"); });
document.addEventListener("htmx:wsError", function () { setLive("offline", "Offline"); });

// Notices (toasts and the bell) are static/js/notices.js.

// One error path for every htmx request. htmx swaps no 4xx/5xx answer, so
// a refusal would vanish: instead its reason (the server's _error.html, or
// the heading of an error page, or a plain-text body) goes to the element
// the nearest data-refusal-target names (the chat: by the composer), else
// right after the control that sent it, else into a toast. A refusal whose
// body is a partial for the request's own target (header Jarvis-Refusal:
// swap, apps/core/refusals.py) is swapped in as a success would be.
const REFUSAL_FALLBACK = "Jarvis could not do that (error %s): try again, or reload the page.";
function refusalReason(xhr) {
  const text = xhr.responseText || "";
  const type = xhr.getResponseHeader("Content-Type") || "";
  let reason = "";
  if (type.indexOf("html") >= 0 && text) {
    // An inert document: nothing in it runs or loads.
    const doc = new DOMParser().parseFromString(text, "text/html");
    const said = doc.querySelector("[data-refusal], [role=alert]");
    const heading = doc.querySelector("h1");
    if (said) reason = said.textContent;
    else if (heading) {
      const more = doc.querySelector("h1 ~ p");
      reason = heading.textContent + (more ? ". " + more.textContent : "");
    } else reason = doc.body ? doc.body.textContent : "";
  } else reason = text;
  reason = reason.replace(/\s+/g, " ").trim();
  if (reason.length > 400) reason = reason.slice(0, 400) + "…";
  return reason || REFUSAL_FALLBACK.replace("%s", String(xhr.status));
}
function refusalNode(reason) {
  const p = document.createElement("p");
  p.className = "alert alert--error refusal";
  p.setAttribute("role", "alert");
  p.setAttribute("data-refusal", "");
  p.setAttribute("data-testid", "refusal");
  p.textContent = reason;
  return p;
}
function toast(reason) {
  const toasts = document.getElementById("toasts");
  if (!toasts) { window.alert(reason); return; }
  const box = document.createElement("div");
  box.className = "toast toast--error";
  box.setAttribute("role", "alert");
  box.setAttribute("data-testid", "toast");
  const text = document.createElement("p");
  text.className = "toast__text";
  text.textContent = reason;
  const close = document.createElement("button");
  close.type = "button"; close.className = "toast__close"; close.textContent = "×";
  close.setAttribute("aria-label", "Dismiss: " + reason);
  close.addEventListener("click", function () { box.remove(); });
  box.appendChild(text); box.appendChild(close);
  toasts.appendChild(box);
}
function showRefusal(elt, reason) {
  const holder = elt && elt.closest ? elt.closest("[data-refusal-target]") : null;
  const place = holder ? document.querySelector(holder.getAttribute("data-refusal-target")) : null;
  if (place) {
    place.innerHTML = "";
    place.appendChild(refusalNode(reason));
    place.scrollIntoView({ block: "nearest" });
    return;
  }
  if (elt && elt.isConnected && elt !== document.body) {
    clearRefusal(elt);
    const node = refusalNode(reason);
    elt.insertAdjacentElement("afterend", node);
    elt.jarvisRefusal = node;
    node.scrollIntoView({ block: "nearest" });
    return;
  }
  toast(reason);
}
function clearRefusal(elt) {
  if (elt && elt.jarvisRefusal) { elt.jarvisRefusal.remove(); elt.jarvisRefusal = null; }
}
function requester(detail) {
  return detail.requestConfig && detail.requestConfig.elt ? detail.requestConfig.elt : detail.elt;
}
document.addEventListener("htmx:beforeSwap", function (event) {
  const xhr = event.detail.xhr;
  if (!xhr || xhr.status < 400) return;
  if (xhr.getResponseHeader("Jarvis-Refusal") === "swap") {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
    return;
  }
  // Cancelling the swap also keeps htmx from logging the refusal as a page
  // error; the request still counts as unsuccessful (afterRequest).
  event.preventDefault();
  showRefusal(requester(event.detail), refusalReason(xhr));
});
document.addEventListener("htmx:sendError", function (event) {
  showRefusal(requester(event.detail), "Jarvis did not answer: check the connection, then try again.");
});
document.addEventListener("htmx:timeout", function (event) {
  showRefusal(requester(event.detail), "Jarvis took too long to answer: try again.");
});
// A later success of the same control (or, under a data-refusal-target,
// of any control there that changes something) takes the reason away.
document.addEventListener("htmx:afterRequest", function (event) {
  if (!event.detail.successful) return;
  const elt = requester(event.detail);
  clearRefusal(elt);
  const holder = elt && elt.closest ? elt.closest("[data-refusal-target]") : null;
  const verb = event.detail.requestConfig ? event.detail.requestConfig.verb : "get";
  if (holder && verb !== "get") {
    const place = document.querySelector(holder.getAttribute("data-refusal-target"));
    if (place) place.innerHTML = "";
  }
});

// A form with data-confirm (Delete, Revoke) asks before it is sent.
document.addEventListener("submit", function (event) {
  const message = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) {
    event.preventDefault();
    event.stopImmediatePropagation(); // nor does htmx send it
  }
}, true);

// On a phone every table is stacked cards (app.css): each cell is shown
// after its column's name, copied here from the table's header row.
function labelCells(root) {
  if (!root.querySelectorAll) return;
  root.querySelectorAll(".table-wrap table").forEach(function (table) {
    const names = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.textContent.trim();
    });
    table.querySelectorAll("tbody tr").forEach(function (row) {
      Array.prototype.forEach.call(row.children, function (cell, i) {
        if (names[i] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", names[i]);
      });
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { labelCells(document); });
document.addEventListener("htmx:load", function (event) { labelCells(event.detail.elt.closest ? (event.detail.elt.closest(".table-wrap") || event.detail.elt) : event.detail.elt); });

// A form marked data-autosubmit sends itself when its select changes (its
// submit button stays for a page without JavaScript).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-autosubmit] button[type=submit]").forEach(function (b) {
    b.remove();
  });
});
document.addEventListener("change", function (event) {
  const form = event.target.closest && event.target.closest("form[data-autosubmit]");
  if (form && event.target.tagName === "SELECT") form.requestSubmit();
});

// A Copy button copies the text of the element its data-copy names (a
// reply's Markdown waits in a hidden textarea; a public key in a <pre>),
// and says when it is done.
document.addEventListener("click", function (event) {
  const button = event.target.closest ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  const label = button.textContent;
  function said(text) {
    button.textContent = text;
    setTimeout(function () { button.textContent = label; }, 1500);
  }
  if (!navigator.clipboard) { said("Copy failed"); return; }
  const text = "value" in source ? source.value : source.textContent;
  navigator.clipboard.writeText(text.trim()).then(
    function () { said("Copied"); },
    function () { said("Copy failed"); }
  );
});
