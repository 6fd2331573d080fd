// The Add page's uploads. Without this script the form is a plain
// multiple-file form with an Upload button. With it, a chosen or dropped file
// is checked here (size, type, empty), then sent on its own with a progress
// bar, one after another; the server answers with the file's row, whose status
// then follows the worker (htmx polling: waiting, reading, ready or failed).
// The Upload button is hidden: choosing is all it takes, so there is one way.
// An ES module. Each file goes by XMLHttpRequest, the one request that
// reports upload progress; its CSRF token is the shared one (http.js).
import { csrfToken } from "./http.js";

function formatSize(bytes) {
  if (bytes < 1024) return bytes + " bytes";
  if (bytes < 1024 * 1024) return Math.round(bytes / 1024) + " KB";
  return (bytes / (1024 * 1024)).toFixed(1) + " MB";
}

function extensionOf(name) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot).toLowerCase() : "";
}

function setup(form) {
  const input = form.querySelector('input[type="file"]');
  const zone = form.querySelector("[data-dropzone]");
  const list = document.getElementById("add-results");
  if (!input || !zone || !list) return;
  const maxMb = Number(form.getAttribute("data-max-mb")) || 0;
  const accepted = input.accept.split(",").map(function (s) { return s.trim().toLowerCase(); });
  const waiting = [];
  let sending = false;
  let lastOfBatch = null;

  form.querySelector("[data-upload-submit]").hidden = true;
  form.querySelector("[data-upload-hint]").textContent =
    "Each file uploads as soon as you choose or drop it; its progress and then its indexing show below.";

  function problemWith(file) {
    if (file.size === 0) return "it is empty: there is nothing in it to add.";
    if (maxMb && file.size > maxMb * 1024 * 1024) {
      return "it is larger than the " + maxMb + " MB limit. Split it or make it smaller, then try again.";
    }
    // A name without an extension goes to the server, which types files by their bytes.
    const ext = extensionOf(file.name);
    const imageOk = file.type.indexOf("image/") === 0 && accepted.indexOf("image/*") !== -1;
    if (ext && !imageOk && accepted.indexOf(ext) === -1) {
      return ext + " files are not something Jarvis can read. Save it as PDF, Word, text or one of the types listed above.";
    }
    return "";
  }

  function makeRow(file) {
    const row = document.createElement("li");
    row.className = "add-result";
    row.setAttribute("data-testid", "upload-row");
    row.setAttribute("data-name", file.name);
    const name = document.createElement("strong");
    name.className = "add-result__name";
    name.textContent = file.name;
    const size = document.createElement("span");
    size.className = "small muted";
    size.textContent = formatSize(file.size);
    const bar = document.createElement("progress");
    bar.className = "upload-progress";
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Upload of " + file.name);
    const state = document.createElement("span");
    state.className = "small";
    state.setAttribute("data-testid", "upload-state");
    row.append(name, " ", size, bar, state);
    // The newest batch on top (as web pages added beside), in the order chosen.
    if (lastOfBatch && lastOfBatch.isConnected) lastOfBatch.after(row); else list.prepend(row);
    lastOfBatch = row;
    return { row: row, bar: bar, state: state, file: file };
  }

  function fail(item, text, canRetry) {
    item.row.classList.add("add-result--error");
    item.row.setAttribute("role", "alert");
    item.bar.remove();
    item.state.textContent = text;
    if (!canRetry) return;
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "button button--small";
    retry.textContent = "Try again";
    retry.addEventListener("click", function () {
      retry.remove();
      item.row.classList.remove("add-result--error");
      item.row.removeAttribute("role");
      item.row.insertBefore(item.bar, item.state);
      item.bar.value = 0;
      queue(item);
    });
    item.row.appendChild(retry);
  }

  function queue(item) {
    waiting.push(item);
    item.state.textContent = "Waiting to upload…";
    next();
  }

  function next() {
    if (sending || !waiting.length) return;
    sending = true;
    send(waiting.shift(), function () { sending = false; next(); });
  }

  function send(item, done) {
    const body = new FormData();
    body.append("files", item.file, item.file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    // The server answers a request from this script with just the file's row.
    xhr.setRequestHeader("HX-Request", "true");
    xhr.upload.addEventListener("progress", function (event) {
      if (!event.lengthComputable) return;
      const share = Math.round((100 * event.loaded) / event.total);
      item.bar.value = share;
      item.state.textContent = "Uploading… " + share + "%";
    });
    xhr.upload.addEventListener("load", function () {
      item.bar.value = 100;
      item.state.textContent = "Uploaded; saving…";
    });
    xhr.addEventListener("load", function () {
      const html = xhr.responseText.trim();
      if ((xhr.status === 200 || xhr.status === 400) && html.indexOf("<li") === 0) {
        const template = document.createElement("template");
        template.innerHTML = html;
        const rows = Array.prototype.slice.call(template.content.children);
        item.row.replaceWith.apply(item.row, rows);
        if (window.htmx) rows.forEach(function (row) { window.htmx.process(row); });
      } else if (xhr.status === 403) {
        fail(item, "The upload was refused: your session may have ended. Reload the page and sign in again.", false);
      } else if (xhr.status === 413) {
        fail(item, "The file is larger than the server accepts.", false);
      } else {
        fail(item, "The server could not take it (error " + xhr.status + ").", true);
      }
      done();
    });
    xhr.addEventListener("error", function () {
      fail(item, "The upload was interrupted: the connection to Jarvis was lost.", true);
      done();
    });
    item.state.textContent = "Uploading… 0%";
    xhr.send(body);
  }

  function add(files) {
    lastOfBatch = null;
    Array.prototype.forEach.call(files, function (file) {
      const item = makeRow(file);
      const problem = problemWith(file);
      if (problem) {
        item.row.setAttribute("data-testid", "add-result");
        fail(item, "Not uploaded: " + problem, false);
        return;
      }
      queue(item);
    });
    // On a phone the list is below the fold: bring the first new row into view.
    if (lastOfBatch) list.querySelector('[data-name]').scrollIntoView({ block: "nearest" });
  }

  function over(on) { zone.setAttribute("data-over", on ? "1" : "0"); }
  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (event) { event.preventDefault(); over(true); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    zone.addEventListener(name, function () { over(false); });
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) add(event.dataTransfer.files);
  });
  input.addEventListener("change", function () {
    if (!input.files.length) return;
    add(input.files);
    input.value = ""; // the same file can be chosen again
  });
  // Enter in the form (or a script that submits it) takes the same path.
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (input.files.length) { add(input.files); input.value = ""; }
  });
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-upload-form]").forEach(setup);
});
