// The sidebar's chat folders: drag a chat onto a folder (or onto the list
// of chats in no folder) to move it, and open or close a folder without
// reloading the page.
//
// Both post the same forms the page already has (templates/chats/_chat_list.html):
// a move is the chat's "Move to folder" form (the keyboard's way, which
// works without this file), a folder's toggle its collapse form, whose
// state is kept on the server so it is the same after a reload and on
// another device. The list is replaced by the server's answer after a move
// (htmx), so counts and menus stay true.
//
// Hooks: data-chat-row and data-move-url on each chat, data-drop-folder on
// each place a chat can be dropped ("" = no folder), data-folder-collapse
// on each folder's toggle form.

const DRAG_TYPE = "application/x-jarvis-chat";
let dragged = null;

function dropPlace(event) {
  return event.target.closest ? event.target.closest("[data-drop-folder]") : null;
}

document.addEventListener("dragstart", (event) => {
  const row = event.target.closest && event.target.closest("[data-chat-row]");
  if (!row) return;
  dragged = row;
  event.dataTransfer.effectAllowed = "move";
  event.dataTransfer.setData(DRAG_TYPE, row.getAttribute("data-chat-row"));
  row.classList.add("is-dragged");
});

document.addEventListener("dragend", () => {
  if (dragged) dragged.classList.remove("is-dragged");
  dragged = null;
  document.querySelectorAll(".is-drop-target").forEach((el) => el.classList.remove("is-drop-target"));
});

document.addEventListener("dragover", (event) => {
  const place = dropPlace(event);
  if (!place || !dragged) return;
  event.preventDefault(); // this place takes the drop
  event.dataTransfer.dropEffect = "move";
  place.classList.add("is-drop-target");
});

document.addEventListener("dragleave", (event) => {
  const place = dropPlace(event);
  if (place && !place.contains(event.relatedTarget)) place.classList.remove("is-drop-target");
});

document.addEventListener("drop", (event) => {
  const place = dropPlace(event);
  if (!place || !dragged) return;
  event.preventDefault(); // a dropped link must not open
  place.classList.remove("is-drop-target");
  const row = dragged;
  dragged = null;
  const folder = place.getAttribute("data-drop-folder");
  const here = row.closest("[data-drop-folder]");
  if (here && here.getAttribute("data-drop-folder") === folder) return; // already there
  // The row is the source: the list's hx-vals (the page's chat) and the
  // body's CSRF header come with it; a refusal takes app.js's error path.
  window.htmx.ajax("POST", row.getAttribute("data-move-url"), {
    source: row,
    target: "#chat-list",
    swap: "innerHTML",
    values: { folder: folder },
  });
});

// A folder's toggle: shown at once, then saved; put back if the save fails.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.matches || !form.matches("[data-folder-collapse]")) return;
  event.preventDefault();
  const button = form.querySelector("[aria-controls]");
  const chats = document.getElementById(button.getAttribute("aria-controls"));
  const field = form.querySelector("input[name=collapsed]");
  const collapse = field.value === "1";
  function showState(collapsed) {
    chats.hidden = collapsed;
    button.setAttribute("aria-expanded", String(!collapsed));
    field.value = collapsed ? "0" : "1"; // what the next press asks for
  }
  const body = new FormData(form); // before the field turns to the next press's value
  showState(collapse);
  fetch(form.action, {
    method: "POST",
    body: body,
    headers: { "X-Requested-With": "fetch" },
    credentials: "same-origin",
  }).then((answer) => {
    if (!answer.ok) showState(!collapse);
  }, () => showState(!collapse));
});
