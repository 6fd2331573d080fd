// The chat page: sending with Enter (or Ctrl+Enter, by the person's
// setting), keeping the newest text in view, @-mentions, copying
// an answer, and following the branch shown when another tab changes it.
// No inline script anywhere (CSP); the page works without this file, minus
// these comforts. An ES module: it runs after the page is parsed, in order
// with the deferred scripts beside it.
//
// Hooks (data-* attributes in the templates): data-reply-id on each reply
// (the id a send follows and a refresh asks for), data-mention-menu and
// data-mention-chips, data-attach-input (with data-attach-url) and
// data-attachment-chips, data-fill-composer, data-regenerate-models,
// data-append (socket frames), data-conversation-url.
import { request } from "./http.js";

function composer() { return document.getElementById("composer"); }

// Enter sends and Shift+Enter starts a new line, as in every chat app; a
// person who chose Ctrl+Enter in Settings (data-send="ctrl-enter") gets
// Enter for lines. Ctrl/Cmd+Enter sends either way. Not while an input
// method is composing a character.
document.addEventListener("keydown", function (event) {
  if (event.key !== "Enter" || event.target.id !== "composer-text" || event.isComposing) return;
  const ctrlOnly = event.target.getAttribute("data-send") === "ctrl-enter";
  const modified = event.ctrlKey || event.metaKey;
  if (!modified && (ctrlOnly || event.shiftKey || event.altKey)) return;
  event.preventDefault();
  const form = composer();
  if (form && window.htmx) window.htmx.trigger(form, "submit");
});

function lastReply() {
  const replies = document.querySelectorAll(".messages-list [data-reply-id]");
  return replies.length ? replies[replies.length - 1] : null;
}
function replyId(reply) { return reply ? Number(reply.getAttribute("data-reply-id")) : null; }

// A send goes on from the reply this page ends with (a second tab may show
// an older branch than the chat's newest).
document.addEventListener("htmx:configRequest", function (event) {
  const reply = lastReply();
  if (event.detail.elt === composer() && reply) event.detail.parameters.after = replyId(reply);
});

// A refused send, regenerate, edit or page shows its reason by the composer,
// and a refused approval comes back as the card saying why: both through
// the shell's one error path (app.js; the page's data-refusal-target).
document.addEventListener("htmx:afterRequest", function (event) {
  const form = composer();
  if (event.detail.elt === form && event.detail.successful) {
    form.querySelector("textarea").value = "";
    form.querySelector("[data-mention-chips]").innerHTML = "";
    const attached = form.querySelector("[data-attachment-chips]");
    if (attached) attached.innerHTML = "";
  }
});

// "Revise" on a plan: the message box starts the request, the person finishes it.
document.addEventListener("click", function (event) {
  const button = event.target.closest && event.target.closest("[data-fill-composer]");
  if (!button) return;
  const box = document.getElementById("composer-text");
  if (!box) return;
  box.value = button.getAttribute("data-fill-composer") + box.value;
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
});

// Each reply's Regenerate offers the other models from the page's one list
// (chat.html), so a reply appended by a send carries no list of its own.
function regenerateModels(root) {
  const list = document.getElementById("regenerate-models");
  if (!list || !list.content.children.length || !root.querySelectorAll) return;
  root.querySelectorAll("select[data-regenerate-models]").forEach(function (select) {
    if (select.options.length > 1) return;
    select.appendChild(list.content.cloneNode(true));
    select.hidden = false;
  });
}
document.addEventListener("htmx:load", function (event) { regenerateModels(event.detail.elt); });

// Keep the newest text in view while a reply streams, unless the reader scrolled up.
function follow() {
  const list = document.getElementById("messages");
  if (!list) return;
  let pinned = true;
  window.addEventListener("scroll", function () {
    pinned = window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
  });
  new MutationObserver(function () {
    if (pinned) window.scrollTo(0, document.body.scrollHeight);
  }).observe(list, { childList: true, subtree: true, characterData: true });
  window.scrollTo(0, document.body.scrollHeight);
}

// @-mentions: "@word" before the caret offers documents and collections; a
// choice becomes a chip (a hidden input) that scopes this turn's searches.
function mentions() {
  const text = document.getElementById("composer-text");
  if (!text) return;
  const menu = document.querySelector("[data-mention-menu]");
  const chips = document.querySelector("[data-mention-chips]");
  const url = text.getAttribute("data-mentions-url");
  let timer = null;
  function word() {
    const before = text.value.slice(0, text.selectionStart);
    const match = /(^|\s)@([^\s@]{0,40})$/.exec(before);
    return match ? match[2] : null;
  }
  function close() { menu.hidden = true; menu.innerHTML = ""; }
  function choose(item) {
    const before = text.value.slice(0, text.selectionStart);
    const after = text.value.slice(text.selectionStart);
    text.value = before.replace(/@([^\s@]{0,40})$/, "@" + item.label + " ") + after;
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.textContent = "@" + item.label + " ";
    const input = document.createElement("input");
    input.type = "hidden"; input.name = "mention"; input.value = item.kind + ":" + item.id;
    const remove = document.createElement("button");
    remove.type = "button"; remove.className = "chip__remove"; remove.textContent = "×";
    remove.setAttribute("aria-label", "Remove mention");
    remove.addEventListener("click", function () { chip.remove(); });
    chip.appendChild(input); chip.appendChild(remove);
    chips.appendChild(chip);
    close(); text.focus();
  }
  text.addEventListener("input", function () {
    const query = word();
    if (query === null) { close(); return; }
    clearTimeout(timer);
    timer = setTimeout(function () {
      request(url + "?q=" + encodeURIComponent(query), { accept: "json" })
        .then(function (answer) {
          const data = answer.data;
          if (!answer.ok || !data || !data.items) return; // the menu waits for the next keystroke
          menu.innerHTML = "";
          data.items.forEach(function (item) {
            const li = document.createElement("li");
            const button = document.createElement("button");
            button.type = "button";
            button.textContent = (item.kind === "collection" ? "Collection: " : "") + item.label;
            button.addEventListener("click", function () { choose(item); });
            li.appendChild(button); menu.appendChild(li);
          });
          menu.hidden = data.items.length === 0;
        });
    }, 200);
  });
  text.addEventListener("keydown", function (event) { if (event.key === "Escape") close(); });
}

// Attachments: the paperclip or a drop on the composer uploads the files
// at once (into the person's uploads); each comes back as a chip holding a
// hidden `attachment` input that the send carries, or as its refusal.
function attachments() {
  const form = composer();
  const input = form && form.querySelector("[data-attach-input]");
  if (!input) return;
  const chips = form.querySelector("[data-attachment-chips]");
  const url = input.getAttribute("data-attach-url");
  function upload(files) {
    if (!files || !files.length) return;
    const body = new FormData();
    Array.prototype.forEach.call(files, function (file) { body.append("files", file); });
    const note = document.createElement("p");
    note.className = "small muted"; note.textContent = "Attaching " + files.length + " file(s)…";
    chips.querySelectorAll(".attach-error").forEach(function (old) { old.remove(); });
    chips.appendChild(note);
    // The token goes as the X-CSRFToken header (http.js), not a form field.
    request(url, { method: "POST", form: body }).then(function (answer) {
      if (answer.status === 0 || answer.status === 403) {
        note.className = "attach-error small"; note.setAttribute("role", "alert");
        note.textContent = answer.status === 403
          ? "Your session has expired: reload the page and attach again."
          : "The files could not be attached: check your connection and try again.";
        return;
      }
      // Any other answer is the chips, or the refusals, as HTML.
      note.remove();
      chips.insertAdjacentHTML("beforeend", answer.text);
    });
  }
  input.addEventListener("change", function () { upload(input.files); input.value = ""; });
  chips.addEventListener("click", function (event) {
    if (event.target.hasAttribute("data-attachment-remove")) event.target.closest(".chip").remove();
  });
  form.addEventListener("dragover", function (event) {
    if (event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0) {
      event.preventDefault(); form.classList.add("composer--drop");
    }
  });
  form.addEventListener("dragleave", function () { form.classList.remove("composer--drop"); });
  form.addEventListener("drop", function (event) {
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    event.preventDefault(); form.classList.remove("composer--drop");
    upload(event.dataTransfer.files);
  });
}

// A socket frame can arrive before the reply it updates is on this page:
// the send's (or a regenerate's, an edit's) answer and the socket race. Its
// blocks whose element is not there yet are held (in order, at most
// HELD_BLOCKS) while one of this page's requests runs, and applied once its
// answer is swapped in, so the reply the answer shows is extended from
// there and nothing is asked for again. With no request running, such a
// block is for a reply this page does not show, and is dropped.
// While an answer (or its reasoning) streams, frames carry only the text
// appended since the last one (apps/chats/streaming.py): data-at is where
// it starts, data-end on the open block where the page's text ends; only
// the part past the end is added, and a gap asks for the whole reply again.
const HELD_BLOCKS = 400;
let held = [];
function hold(block) {
  if (requests > 0 && held.length < HELD_BLOCKS) held.push(block);
}
function append(piece) {
  const open = document.getElementById(piece.getAttribute("data-append"));
  if (!open) { hold(piece); return; }
  const at = Number(piece.getAttribute("data-at"));
  const end = Number(open.getAttribute("data-end"));
  if (at > end) { refresh(open.closest("[data-reply-id]")); return; }
  const fresh = piece.textContent.slice(end - at);
  if (!fresh) return;
  open.appendChild(document.createTextNode(fresh));
  open.setAttribute("data-end", String(end + fresh.length));
}
function applyHeld() {
  const blocks = held;
  held = [];
  blocks.forEach(function (block) {
    if (block.hasAttribute("data-append")) { append(block); return; }
    const target = document.getElementById(block.id);
    if (!target) return;
    block.removeAttribute("hx-swap-oob");
    target.replaceWith(block);
    window.htmx.process(block);
  });
}
function frames() {
  if (!window.htmx) return;
  window.htmx.defineExtension("chat-frames", {
    transformResponse: function (text, xhr) {
      if (xhr) return text; // only socket frames
      const template = document.createElement("template");
      template.innerHTML = text;
      Array.prototype.slice.call(template.content.children).forEach(function (block) {
        if (block.hasAttribute("data-append")) { append(block); block.remove(); return; }
        if (block.id && !document.getElementById(block.id)) { hold(block); block.remove(); }
      });
      return template.innerHTML;
    }
  });
}

// The socket is asked for a reply as it is now when the page cannot know
// it: a gap in the appended text, or a socket that (re)opened.
let socket = null;
let requests = 0; // this page's own requests in flight (sends, regenerates, pages)
function refresh(reply) {
  if (socket && reply) socket.send(JSON.stringify({ refresh: replyId(reply) }));
}
document.addEventListener("htmx:beforeRequest", function () { requests += 1; });
document.addEventListener("htmx:afterRequest", function () { requests = Math.max(0, requests - 1); });

// The chat's branch ends with another reply than this page shows (another
// tab sent, regenerated, edited or paged): fetch the conversation again.
// Not while this page's own request runs: its answer brings the change.
function followLeaf() {
  const marker = document.getElementById("chat-leaf");
  const main = document.querySelector("[data-conversation-url]");
  const list = document.getElementById("messages");
  if (!marker || !main || !list || requests > 0) return;
  const leaf = marker.getAttribute("data-leaf");
  if (!leaf || document.getElementById("msg-" + leaf)) return;
  window.htmx.ajax("GET", main.getAttribute("data-conversation-url"), { target: list, swap: "innerHTML" });
}
document.addEventListener("htmx:wsAfterMessage", followLeaf);
// A reply shown as still running when the socket (re)opens may have finished
// in between (the page was rendered, then the reply ended): ask for it.
document.addEventListener("htmx:wsOpen", function (event) {
  socket = event.detail.socketWrapper;
  document.querySelectorAll('#messages [data-reply-id][data-status=pending], #messages [data-reply-id][data-status=streaming]').forEach(refresh);
});
// A send's answer (the exchange), or a regenerate's, an edit's or a page's
// (the whole conversation), is on the page: the frames held meanwhile apply.
document.addEventListener("htmx:afterSwap", function (event) {
  const target = event.detail.target;
  const list = target && target.classList && target.classList.contains("messages-list");
  if (event.detail.requestConfig && (list || event.detail.requestConfig.elt === composer())) {
    applyHeld();
  }
});
document.addEventListener("htmx:afterRequest", function () { if (requests === 0) applyHeld(); });

// The header's model picker: a refused choice (a private chat and a cloud
// model) is explained by the composer (app.js); the picker goes back to the
// model the chat still uses instead of showing the refused one.
document.addEventListener("htmx:afterRequest", function (event) {
  const form = event.detail.elt;
  if (form && form.id === "chat-model-form" && !event.detail.successful) form.reset();
});

document.addEventListener("DOMContentLoaded", function () {
  frames(); follow(); mentions(); attachments(); regenerateModels(document);
});
