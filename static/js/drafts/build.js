// Compile (.tex, latexmk) and Export PDF (.md, pandoc): the file is saved
// first, then the build is queued on the server (a person runs one build at a
// time, the instance two: apps/drafts/build_queue.py). While it waits the
// status says how many builds are ahead; while it runs the seconds count; the
// result (a PDF in the PDF.js viewer, a download link, or the error and its
// log) shows in the preview panel. Results are kept per file for the page's lifetime.
//
// Exports:
//   showBuild()   paint the active file's last result and the Text | PDF switch
//   buildStart()  wire the Compile, Export and Text | PDF buttons
import { effectiveSide, page, reviewing, state } from "./state.js";
import { request } from "./http.js";
import { save } from "./save.js";
import { layout } from "./side.js";
import { measureAnchors } from "./preview.js";

// The viewer module is loaded on first use, from the URL the page gives
// (hashed by collectstatic), so the editor does not import it by path.
function showPdf(frame, url) {
  import(frame.getAttribute("data-viewer")).then(function (viewer) {
    return viewer.openPdf(frame, { url: url, page: 1 });
  }).catch(function () {
    frame.textContent = "The PDF could not be shown here: download it below.";
  });
}

export function showBuild() {
  const previewFrame = page.previewFrame;
  const pdfFrame = page.pdfFrame;
  const pdfViews = page.pdfViews;
  const buildOutput = page.buildOutput;
  const result = state.active ? state.builds[state.active.name] : null;
  const hasPdf = !!(result && result.ok && result.kind === "compile");
  pdfViews.hidden = !hasPdf;
  if (!hasPdf) state.previewView = "text";
  previewFrame.hidden = state.previewView !== "text";
  pdfFrame.hidden = state.previewView !== "pdf";
  pdfViews.querySelectorAll("[data-preview-view]").forEach(function (button) {
    button.setAttribute("aria-pressed", String(button.getAttribute("data-preview-view") === state.previewView));
  });
  if (hasPdf && pdfFrame.pdfResult !== result) {
    // Each build is drawn once (a rebuild has the same URL but is a new result).
    pdfFrame.pdfResult = result;
    pdfFrame.setAttribute("data-src", result.url);
    showPdf(pdfFrame, result.url);
  }
  buildOutput.textContent = "";
  buildOutput.hidden = !result;
  if (!result) return;
  if (result.ok) {
    // The download is always offered beside the viewer.
    const line = document.createElement("p");
    line.textContent = (result.kind === "compile" ? "Compiled" : "PDF exported") + " in " + result.seconds + " s. ";
    const link = document.createElement("a");
    link.href = result.url + (result.kind === "compile" ? "&download=1" : "");
    link.setAttribute("download", "");
    link.setAttribute("data-testid", "download-pdf");
    link.textContent = "Download the PDF";
    line.appendChild(link);
    buildOutput.appendChild(line);
    return;
  }
  const error = document.createElement("p");
  error.className = "drafts-build__error";
  error.textContent = (result.kind === "compile" ? "Compiling failed" : "Exporting failed") +
    (result.error ? ": " + result.error : ".");
  buildOutput.appendChild(error);
  if (result.log) {
    const details = document.createElement("details");
    details.open = true;
    const summary = document.createElement("summary");
    summary.textContent = "Log";
    const pre = document.createElement("pre");
    pre.textContent = result.log;
    details.appendChild(summary);
    details.appendChild(pre);
    buildOutput.appendChild(details);
  }
}

function build(kind, button) {
  const tab = state.active;
  if (!tab || button.disabled) return;
  button.disabled = true;
  // Save first, so the build never runs on text older than the screen.
  save(tab).then(function (saved) {
    if (!saved) {
      button.disabled = false;
      return;
    }
    let started = Date.now();
    let waiting = null; // builds ahead of this one, while it waits its turn
    const label = kind === "compile" ? "Compiling… " : "Exporting… ";
    function tick() {
      if (waiting !== null) {
        page.buildStatus.textContent = waiting > 0
          ? "Waiting: " + waiting + " build" + (waiting === 1 ? "" : "s") + " ahead of yours…"
          : "Waiting for a free slot…";
        return;
      }
      page.buildStatus.textContent = label + Math.floor((Date.now() - started) / 1000) + " s";
    }
    tick();
    const timer = window.setInterval(tick, 250);

    // Poll the ticket until the build is done; the answer then holds the result.
    function follow(answer) {
      if (answer.state === "queued") {
        waiting = answer.ahead || 0;
      } else if (waiting !== null) {
        waiting = null;
        started = Date.now(); // the seconds count from when it actually started
      }
      if (answer.state === "done") return Promise.resolve({ ok: true, status: 200, data: answer });
      tick();
      return new Promise(function (resolve) { window.setTimeout(resolve, 700); }).then(function () {
        return request(answer.status_url);
      }).then(function (r) { return r.ok ? follow(r.data) : r; });
    }
    const url = kind === "compile" ? page.urls.urlCompile : page.urls.urlExport;
    request(url, { method: "POST", body: { name: tab.name } }).then(function (r) {
      return r.ok ? follow(r.data) : r;
    }).then(function (r) {
      window.clearInterval(timer);
      button.disabled = false;
      const result = r.ok ? r.data : { ok: false, error: r.data.error || "", log: "", seconds: 0 };
      result.kind = kind;
      state.builds[tab.name] = result;
      page.buildStatus.textContent = result.ok
        ? (kind === "compile" ? "Compiled" : "Exported") + " in " + result.seconds + " s"
        : "";
      if (tab !== state.active) return;
      if (result.ok && kind === "compile") state.previewView = "pdf";
      if (effectiveSide() !== "preview") {
        state.side = "preview";
        state.previewDuringReview = reviewing();
        layout();
      }
      showBuild();
    });
  });
}

export function buildStart() {
  page.pdfViews.querySelectorAll("[data-preview-view]").forEach(function (button) {
    button.addEventListener("click", function () {
      state.previewView = button.getAttribute("data-preview-view");
      showBuild();
      if (state.previewView === "text") measureAnchors();
    });
  });
  const compileButton = page.compileButton;
  const exportButton = page.exportButton;
  if (compileButton) compileButton.addEventListener("click", function () { build("compile", compileButton); });
  if (exportButton) exportButton.addEventListener("click", function () { build("export", exportButton); });
}
