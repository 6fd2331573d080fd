// A PDF viewer drawn by the vendored PDF.js (docs/architecture.md, "Vendored
// browser libraries"), used where a PDF is shown: the library's document page
// and a compiled draft. Chromium's own viewer is not used: it cannot run in a
// sandboxed frame, and a frame would need the site's frame-ancestors loosened.
//
// One page at a time: its canvas (PDF.js draws the file's own highlight and
// note annotations onto it) with the selectable text laid over it, and a bar
// with Previous / Next, the page number and zoom. PDF.js only reads the file:
// no script inside a PDF runs.
//
// The page it opens at: #page=N or ?page=N in the address, or #chunk-ID where
// the element with that id carries data-page (a citation chip in chat links to
// its passage that way, so the viewer opens at the cited page).
//
// Exports: openPdf(container, { url, page }) → a viewer with goTo(n);
// containers with [data-pdf-viewer] and a data-url start by themselves.
// The container says where PDF.js lives: data-pdfjs and data-pdfjs-worker.

const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];

function pageFromAddress() {
  const params = new URLSearchParams(location.search);
  const hash = location.hash.slice(1);
  const hashed = /^page=(\d+)$/.exec(hash);
  if (hashed) return { page: Number(hashed[1]), asked: true };
  if (hash.startsWith("chunk-")) {
    const target = document.getElementById(hash);
    const page = target ? Number(target.getAttribute("data-page")) : 0;
    if (page) return { page, asked: true };
  }
  if (params.get("page") && /^\d+$/.test(params.get("page"))) {
    return { page: Number(params.get("page")), asked: true };
  }
  return { page: 1, asked: false };
}

function button(label, text, testid) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = "button button--small";
  element.textContent = text;
  element.setAttribute("aria-label", label);
  element.setAttribute("data-testid", testid);
  return element;
}

function toolbar(viewer) {
  const bar = document.createElement("div");
  bar.className = "pdf-viewer__bar";
  viewer.previous = button("Previous page", "‹ Previous", "pdf-previous");
  viewer.next = button("Next page", "Next ›", "pdf-next");
  const label = document.createElement("label");
  label.className = "pdf-viewer__page";
  label.append("Page ");
  viewer.input = document.createElement("input");
  viewer.input.type = "number";
  viewer.input.min = "1";
  viewer.input.inputMode = "numeric";
  viewer.input.setAttribute("data-testid", "pdf-page-number");
  label.append(viewer.input);
  viewer.count = document.createElement("span");
  viewer.count.setAttribute("data-testid", "pdf-page-count");
  label.append(" of ", viewer.count);
  viewer.smaller = button("Zoom out", "−", "pdf-zoom-out");
  viewer.larger = button("Zoom in", "+", "pdf-zoom-in");
  viewer.fit = button("Fit the width", "Fit width", "pdf-fit");
  bar.append(viewer.previous, label, viewer.next, viewer.smaller, viewer.fit, viewer.larger);
  return bar;
}

export async function openPdf(container, { url, page } = {}) {
  const pdfjs = await import(container.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = container.dataset.pdfjsWorker;
  const vendor = new URL(".", new URL(container.dataset.pdfjs, location.href)).href;

  if (container.pdfViewer) container.pdfViewer.destroy();
  container.textContent = "";
  container.setAttribute("data-state", "loading");
  const viewer = { number: 1, zoom: null, rendering: null, pending: null };
  container.append(toolbar(viewer));
  const stage = document.createElement("div");
  stage.className = "pdf-viewer__stage";
  const sheet = document.createElement("div");
  sheet.className = "pdf-viewer__sheet";
  const canvas = document.createElement("canvas");
  canvas.setAttribute("data-testid", "pdf-canvas");
  const text = document.createElement("div");
  text.className = "textLayer";
  sheet.append(canvas, text);
  stage.append(sheet);
  container.append(stage);

  // useWasm false: the worker's CSP has no 'wasm-unsafe-eval'; the JavaScript
  // decoders in wasm/ are used instead (see docs/architecture.md).
  const task = pdfjs.getDocument({
    url,
    useWasm: false,
    wasmUrl: `${vendor}wasm/`,
    standardFontDataUrl: `${vendor}standard_fonts/`,
  });
  let pdf;
  try {
    pdf = await task.promise;
  } catch (error) {
    container.setAttribute("data-state", "error");
    stage.textContent = "";
    const message = document.createElement("p");
    message.className = "alert alert--error";
    message.textContent = "This PDF could not be shown here. Download it to read it.";
    stage.append(message);
    throw error;
  }
  viewer.count.textContent = String(pdf.numPages);
  viewer.input.max = String(pdf.numPages);

  async function draw() {
    const current = await pdf.getPage(viewer.number);
    const natural = current.getViewport({ scale: 1 });
    const padding = parseFloat(getComputedStyle(stage).paddingLeft) * 2 || 0;
    const room = Math.max(200, stage.clientWidth - padding);
    const scale = viewer.zoom || Math.min(room / natural.width, 3);
    const viewport = current.getViewport({ scale });
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    // CSSOM, not a style attribute: the site's policy allows the one, not the other.
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    sheet.style.width = canvas.style.width;
    sheet.style.height = canvas.style.height;
    await current.render({
      canvas,
      viewport,
      transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
    }).promise;
    text.textContent = "";
    sheet.style.setProperty("--total-scale-factor", String(viewport.scale));
    await new pdfjs.TextLayer({
      textContentSource: current.streamTextContent(),
      container: text,
      viewport,
    }).render();
  }

  async function show(number) {
    viewer.number = Math.min(Math.max(1, number || 1), pdf.numPages);
    viewer.input.value = String(viewer.number);
    viewer.previous.disabled = viewer.number <= 1;
    viewer.next.disabled = viewer.number >= pdf.numPages;
    container.setAttribute("data-page", String(viewer.number));
    container.setAttribute("data-state", "drawing");
    // One drawing at a time: a click during one draws the latest page after it.
    if (viewer.rendering) {
      viewer.pending = true;
      return;
    }
    viewer.rendering = draw();
    try {
      await viewer.rendering;
    } finally {
      viewer.rendering = null;
    }
    if (viewer.pending) {
      viewer.pending = false;
      return show(viewer.number);
    }
    container.setAttribute("data-state", "ready");
  }

  function zoomBy(step) {
    const now = viewer.zoom || parseFloat(sheet.style.getPropertyValue("--total-scale-factor")) || 1;
    const index = ZOOMS.findIndex((z) => z >= now - 0.01);
    const at = index === -1 ? ZOOMS.length - 1 : index;
    viewer.zoom = ZOOMS[Math.min(Math.max(0, at + step), ZOOMS.length - 1)];
    show(viewer.number);
  }

  viewer.previous.addEventListener("click", () => show(viewer.number - 1));
  viewer.next.addEventListener("click", () => show(viewer.number + 1));
  viewer.input.addEventListener("change", () => show(Number(viewer.input.value)));
  viewer.larger.addEventListener("click", () => zoomBy(1));
  viewer.smaller.addEventListener("click", () => zoomBy(-1));
  viewer.fit.addEventListener("click", () => { viewer.zoom = null; show(viewer.number); });
  stage.tabIndex = 0;
  stage.setAttribute("aria-label", "PDF page");
  stage.addEventListener("keydown", (event) => {
    if (event.key === "ArrowRight" || event.key === "PageDown") show(viewer.number + 1);
    if (event.key === "ArrowLeft" || event.key === "PageUp") show(viewer.number - 1);
  });
  viewer.goTo = show;
  viewer.destroy = () => task.destroy();
  container.pdfViewer = viewer;
  await show(page || 1);
  return viewer;
}

// Into view below the sticky site header (whose height differs by width).
function reveal(container) {
  const header = document.querySelector(".site-header");
  const below = header && getComputedStyle(header).position !== "static" ? header.offsetHeight : 0;
  const top = container.getBoundingClientRect().top + window.scrollY - below - 8;
  window.scrollTo({ top: Math.max(0, top) });
}

function start(container) {
  const wanted = pageFromAddress();
  openPdf(container, { url: container.dataset.url, page: wanted.page }).then((viewer) => {
    if (wanted.asked) reveal(container);
    // Links to "#page=N" on the page (the highlights list) turn the viewer's page.
    window.addEventListener("hashchange", () => {
      const again = pageFromAddress();
      if (again.asked) {
        viewer.goTo(again.page);
        reveal(container);
      }
    });
  }).catch(() => {});
}

document.querySelectorAll("[data-pdf-viewer][data-url]").forEach(start);
