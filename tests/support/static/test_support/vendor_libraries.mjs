// Starts xterm.js and PDF.js as the product pages will, and records what a
// browser test checks: CSP violations, the terminal's rows, the PDF page drawn.
// The libraries are imported dynamically so the violation listener is in
// place before either runs.
const result = { violations: [], terminal: null, pdf: null, errors: [] };
window.vendorProof = result;

document.addEventListener("securitypolicyviolation", (event) => {
  result.violations.push(`${event.effectiveDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});

const VENDOR = "/static/vendor/";

async function until(predicate, timeoutMs = 10000) {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error("timed out waiting for the terminal to draw");
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
}

async function startTerminal() {
  const { Terminal } = await import(`${VENDOR}xterm/xterm.mjs`);
  const { FitAddon } = await import(`${VENDOR}xterm-addon-fit/addon-fit.mjs`);
  const terminal = new Terminal({ convertEol: true, scrollback: 1000 });
  const fit = new FitAddon();
  terminal.loadAddon(fit);
  terminal.open(document.getElementById("terminal"));
  fit.fit();
  terminal.write("plain line\n\x1b[31mred words\x1b[0m and \x1b[38;2;0;128;255mtrue colour\x1b[0m\n");
  // write() parses later and the screen is drawn on a later animation frame.
  const rows = document.querySelector("#terminal .xterm-rows");
  await until(() => rows.textContent.includes("true colour"));
  const colourOf = (words) => {
    const span = [...rows.querySelectorAll("span")].find((s) => s.textContent.includes(words));
    return span ? getComputedStyle(span).color : null;
  };
  result.terminal = {
    cols: terminal.cols,
    rows: terminal.rows,
    text: [...rows.children].map((row) => row.textContent).join("\n").trimEnd(),
    background: getComputedStyle(document.querySelector("#terminal .xterm-scrollable-element")).backgroundColor,
    plainColour: colourOf("plain line"),
    redColour: colourOf("red words"),
    trueColour: colourOf("true colour"),
  };
}

async function startPdf(url, pageNumber) {
  const pdfjs = await import(`${VENDOR}pdfjs/pdf.min.mjs`);
  pdfjs.GlobalWorkerOptions.workerSrc = `${VENDOR}pdfjs/pdf.worker.min.mjs`;
  const pdf = await pdfjs.getDocument({
    url,
    // The worker's CSP has no 'wasm-unsafe-eval': decode JBIG2/JPEG 2000 with
    // the JavaScript fallbacks in wasmUrl instead of trying (and being refused).
    useWasm: false,
    wasmUrl: `${VENDOR}pdfjs/wasm/`,
    standardFontDataUrl: `${VENDOR}pdfjs/standard_fonts/`,
  }).promise;
  const page = await pdf.getPage(pageNumber);
  const viewport = page.getViewport({ scale: 1.5 });
  const canvas = document.getElementById("pdf-canvas");
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  await page.render({ canvas, viewport }).promise;
  const container = document.getElementById("pdf-text");
  container.style.setProperty("--total-scale-factor", String(viewport.scale));
  const textLayer = new pdfjs.TextLayer({
    textContentSource: page.streamTextContent(),
    container,
    viewport,
  });
  await textLayer.render();
  // What a person would see: red pixels where the JPEG 2000 image is, and
  // dark pixels (drawn glyphs) under each text span, so the selectable text
  // lies over the drawn text.
  const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
  const isRed = (i) => data[i] > 150 && data[i + 1] < 80 && data[i + 2] < 80;
  const isDark = (i) => data[i] < 100 && data[i + 1] < 100 && data[i + 2] < 100;
  let red = 0;
  for (let i = 0; i < data.length; i += 4) if (isRed(i)) red += 1;
  const origin = canvas.getBoundingClientRect();
  const spans = [...container.querySelectorAll("span")].filter((span) => span.textContent.trim());
  result.pdf = {
    version: pdfjs.version,
    pages: pdf.numPages,
    redPixels: red,
    spans: spans.map((span) => {
      const box = span.getBoundingClientRect();
      let ink = 0;
      for (let y = Math.max(0, Math.floor(box.top - origin.top)); y < Math.min(canvas.height, box.bottom - origin.top); y++) {
        for (let x = Math.max(0, Math.floor(box.left - origin.left)); x < Math.min(canvas.width, box.right - origin.left); x++) {
          if (isDark((y * canvas.width + x) * 4)) ink += 1;
        }
      }
      return { text: span.textContent, ink };
    }),
  };
}

async function main() {
  // ?run=terminal, or ?run=pdf&pdf=URL&page=N: one library per page load, so
  // each one's CSP violations are its own.
  const params = new URLSearchParams(location.search);
  try {
    if (params.get("run") === "terminal") {
      await startTerminal();
    } else if (params.get("run") === "pdf") {
      await startPdf(params.get("pdf"), Number(params.get("page")));
    } else {
      throw new Error("say ?run=terminal or ?run=pdf");
    }
  } catch (error) {
    result.errors.push(String(error));
  }
  document.body.dataset.state = "done";
}

main();
