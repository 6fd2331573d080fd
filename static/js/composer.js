// The composer's slash commands and the new-chat screen's starting points.
//
// "/" at the start of the message box opens a list of commands (a listbox:
// arrows move, Enter or Tab picks, Escape closes; the box keeps the focus and
// names the active option with aria-activedescendant). Sending runs a command
// only when the first word is exactly one of them:
//   /search <words>  the library's search for the words (its own page)
//   /new             a new chat (any words after it wait in its composer)
//   /model <name>    this chat's model, through the header's model picker
//                    (on the new-chat page, the picker under the composer)
//   /private         this chat stays on local models (POST …/private/; on
//                    the new-chat page the first send carries private=1)
// "//" at the start sends the message with one "/" ("//new" sends "/new"),
// and an unknown command ("/foo bar") is sent as written.
//
// Sending is intercepted on the form's submit in the capture phase on the
// document, before htmx (or chat.js's Enter) sees it; nothing here changes
// how an ordinary message is sent. Without this file a command is sent as a
// message, which is what it would say anyway.
//
// Starting points (chat.html's empty state, data-starting-point) fill the
// message box with their text; they never send.

const COMMANDS = [
  { name: "search", usage: "/search words", help: "Search your library for the words", args: true },
  { name: "new", usage: "/new", help: "Start a new chat", args: false },
  { name: "model", usage: "/model name", help: "Switch this chat's model", args: true },
  { name: "private", usage: "/private", help: "Keep this chat on local models for good", args: false },
];
const PREFILL_KEY = "jarvis:composer-prefill";

const config = document.querySelector("script[data-composer]");
const form = document.getElementById("composer");
const box = document.getElementById("composer-text");

function setting(name) {
  return config ? config.getAttribute("data-" + name) || "" : "";
}

// One line under the message box for what a command did or needs.
function hint(text) {
  let line = form.querySelector("[data-command-hint]");
  if (!line) {
    line = document.createElement("p");
    line.className = "small composer__hint";
    line.setAttribute("data-command-hint", "");
    line.setAttribute("data-testid", "command-hint");
    line.setAttribute("role", "status");
    box.insertAdjacentElement("beforebegin", line);
  }
  line.textContent = text;
}

// ---- the models a /model can name: the header's picker, else the new chat's ----

function modelSelect() {
  return document.getElementById("chat-model") || form.querySelector("select[name=model]");
}

function optionName(option) {
  // "home:local-7b · local (default)" → "home:local-7b"
  return option.textContent.replace(/\s*\(default\)\s*$/, "").replace(/\s*·\s*(cloud|local)\s*$/, "").trim();
}

function modelChoices() {
  const select = modelSelect();
  if (!select) return [];
  const seen = new Set();
  return Array.from(select.options)
    .map((option) => ({
      value: option.value,
      // The header's first option is "Default (…)"; the new chat's default is named.
      name: option.textContent.trim().startsWith("Default") ? "default" : optionName(option),
      text: option.textContent.trim(),
    }))
    .filter((choice) => !seen.has(choice.name) && seen.add(choice.name));
}

function findModel(wanted) {
  const want = wanted.trim().toLowerCase();
  const choices = modelChoices();
  const exact = choices.filter(
    (c) => c.name.toLowerCase() === want || c.value.toLowerCase() === want
      || (c.value.includes(":") && c.value.split(":").slice(1).join(":").toLowerCase() === want),
  );
  if (exact.length) return { found: exact[0], choices };
  const partial = choices.filter((c) => c.name.toLowerCase().includes(want) || c.value.toLowerCase().includes(want));
  return { found: partial.length === 1 ? partial[0] : null, choices, several: partial.length > 1 };
}

// ---- the command list ----

const list = document.createElement("ul");
list.id = "command-list";
list.className = "command-menu";
list.setAttribute("role", "listbox");
list.setAttribute("aria-label", "Commands");
list.setAttribute("data-testid", "command-list");
list.hidden = true;
let items = [];
let active = -1;

function suggestions() {
  const value = box.value;
  if (!value.startsWith("/") || value.startsWith("//")) return [];
  const word = /^\/([a-z]*)$/.exec(value);
  if (word) {
    return COMMANDS
      .filter((c) => c.name.startsWith(word[1]))
      .map((c) => ({ fill: "/" + c.name + (c.args ? " " : ""), label: c.usage, help: c.help }));
  }
  const model = /^\/model (\S*)$/.exec(value);
  if (model) {
    const typed = model[1].toLowerCase();
    return modelChoices()
      .filter((c) => c.name.toLowerCase().includes(typed))
      // A model's name is the whole command: Enter on it runs it.
      .map((c) => ({ fill: "/model " + c.name, label: c.name, help: c.text === c.name ? "" : c.text, run: true }));
  }
  return [];
}

function close() {
  list.hidden = true;
  list.innerHTML = "";
  items = [];
  active = -1;
  box.removeAttribute("aria-activedescendant");
}

function show(index) {
  active = index;
  Array.from(list.children).forEach((li, i) => li.setAttribute("aria-selected", String(i === index)));
  if (index >= 0) {
    box.setAttribute("aria-activedescendant", "command-option-" + index);
    list.children[index].scrollIntoView({ block: "nearest" });
  } else {
    box.removeAttribute("aria-activedescendant");
  }
}

function open() {
  items = suggestions();
  if (!items.length) { close(); return; }
  list.innerHTML = "";
  items.forEach((item, index) => {
    const li = document.createElement("li");
    li.id = "command-option-" + index;
    li.setAttribute("role", "option");
    li.setAttribute("data-testid", "command-option");
    const label = document.createElement("span");
    label.className = "command-menu__label";
    label.textContent = item.label;
    li.appendChild(label);
    if (item.help) {
      const help = document.createElement("span");
      help.className = "small muted";
      help.textContent = item.help;
      li.appendChild(help);
    }
    // mousedown, not click: the message box keeps the focus.
    li.addEventListener("mousedown", (event) => { event.preventDefault(); pick(index, true); });
    list.appendChild(li);
  });
  list.hidden = false;
  show(0);
}

function choose(index) {
  const item = items[index];
  if (!item) return;
  box.value = item.fill;
  box.setSelectionRange(box.value.length, box.value.length);
  close();
  box.focus();
  open(); // "/model " goes straight on to the models
}

// Picking an option; `go`: and running it when it is a whole command (a model's name).
function pick(index, go) {
  const run = go && items[index] && items[index].run;
  choose(index);
  if (run) {
    close();
    form.requestSubmit();
  }
}

function onKey(event) {
  if (list.hidden || event.isComposing) return;
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    const step = event.key === "ArrowDown" ? 1 : -1;
    show((active + step + items.length) % items.length);
  } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
    if (active < 0) return;
    if (items[active].fill.trim() === box.value.trim()) {
      close(); // already written out: Enter sends it (and runs it), Tab just closes
      if (event.key === "Tab") event.preventDefault();
      return;
    }
    // Picking a command is not sending it: chat.js's Enter (on the document)
    // never sees it. A model's name completes /model, so Enter runs that.
    event.preventDefault();
    event.stopPropagation();
    pick(active, event.key === "Enter");
  } else if (event.key === "Escape") {
    event.preventDefault();
    event.stopPropagation();
    close();
  }
}

// ---- running a command ----

function parse(text) {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return null;
  const command = COMMANDS.find((c) => c.name === match[1]);
  return command ? { name: command.name, rest: (match[2] || "").trim() } : null;
}

function runSearch(words) {
  if (!words) { hint("Type what to search for after /search, e.g. /search bin collection."); return; }
  box.value = "";
  window.location.assign(setting("library-url") + "?q=" + encodeURIComponent(words));
}

function runNew(words) {
  box.value = "";
  try {
    if (words) window.sessionStorage.setItem(PREFILL_KEY, words);
  } catch (error) {
    // Storage refused (a private window's quota): the new chat opens empty.
  }
  window.location.assign(setting("new-url"));
}

function runModel(name) {
  const select = modelSelect();
  if (!select) { hint("Only one model is available to you."); return; }
  const names = modelChoices().map((c) => c.name).join(", ");
  if (!name) { hint("Name a model after /model: " + names + "."); return; }
  const { found, several } = findModel(name);
  if (!found) {
    hint((several ? "More than one model matches “" : "No model called “") + name + "”. Choose one of: " + names + ".");
    return;
  }
  select.value = found.value;
  box.value = "";
  const picker = document.getElementById("chat-model-form");
  if (picker && picker.contains(select)) {
    // The header's own form (htmx): a refusal shows by the composer as any other.
    picker.requestSubmit();
    hint("Switching this chat to " + found.name + "…");
  } else {
    select.dispatchEvent(new Event("change", { bubbles: true }));
    hint("The new chat will use " + found.name + ".");
  }
}

function runPrivate() {
  const url = setting("private-url");
  if (!url) { privateNewChat(); return; }
  const text = box.value;
  box.value = "";
  const done = (event) => {
    if (event.detail.requestConfig.path !== url) return;
    document.body.removeEventListener("htmx:afterRequest", done);
    if (event.detail.successful) {
      hint(event.detail.xhr.getResponseHeader("Jarvis-Said") || "This chat is private now.");
    } else {
      box.value = text; // refused: the reason shows by the composer, the command stays
    }
  };
  document.body.addEventListener("htmx:afterRequest", done);
  // htmx, so the header's badge and picker are swapped in (oob) and a
  // refusal takes the page's one error path (app.js).
  window.htmx.ajax("POST", url, { source: box, swap: "none" });
}

// On the new-chat page there is no chat yet: the first send carries
// private=1 (a chip says so, and takes it back), and the server refuses it
// on a cloud model before anything is written.
function privateNewChat() {
  box.value = "";
  if (!form.querySelector("input[name=private]")) {
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.setAttribute("data-testid", "private-chip");
    chip.textContent = "Private chat: local models only ";
    const input = document.createElement("input");
    input.type = "hidden"; input.name = "private"; input.value = "1";
    const remove = document.createElement("button");
    remove.type = "button"; remove.className = "chip__remove"; remove.textContent = "×";
    remove.setAttribute("aria-label", "Not a private chat");
    remove.addEventListener("click", () => { chip.remove(); hint(""); });
    chip.appendChild(input); chip.appendChild(remove);
    (form.querySelector("[data-mention-chips]") || form).appendChild(chip);
  }
  hint("This chat will be private: it stays on local models. Write your first message.");
  box.focus();
}

function onSubmit(event) {
  if (event.target !== form) return;
  const text = box.value;
  if (text.trimStart().startsWith("//")) {
    // Escaped: send it with one slash fewer.
    box.value = text.replace(/^(\s*)\//, "$1");
    return;
  }
  const command = parse(text);
  if (!command) return; // not a command: sent as written
  event.preventDefault();
  event.stopImmediatePropagation();
  close();
  if (command.name === "search") runSearch(command.rest);
  else if (command.name === "new") runNew(command.rest);
  else if (command.name === "model") runModel(command.rest);
  else if (command.name === "private") runPrivate();
}

// ---- starting points ----

function onStartingPoint(event) {
  const button = event.target.closest && event.target.closest("[data-starting-point]");
  if (!button) return;
  box.value = button.getAttribute("data-starting-point");
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
  box.dispatchEvent(new Event("input", { bubbles: true }));
}

function prefill() {
  let words = null;
  try {
    words = window.sessionStorage.getItem(PREFILL_KEY);
    window.sessionStorage.removeItem(PREFILL_KEY);
  } catch (error) {
    return; // no storage: nothing was kept
  }
  if (words && !box.value) {
    box.value = words;
    box.focus();
  }
}

if (form && box) {
  box.insertAdjacentElement("afterend", list);
  box.setAttribute("aria-autocomplete", "list");
  box.setAttribute("aria-controls", list.id);
  box.addEventListener("input", open);
  box.addEventListener("keydown", onKey);
  box.addEventListener("blur", close);
  document.addEventListener("submit", onSubmit, true);
  document.addEventListener("click", onStartingPoint);
  // A message sent: what the last command said is old news.
  document.addEventListener("htmx:afterRequest", (event) => {
    const line = form.querySelector("[data-command-hint]");
    if (line && event.detail.elt === form && event.detail.successful) line.textContent = "";
  });
  prefill();
}
