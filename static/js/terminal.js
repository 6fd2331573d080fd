// The terminal panel of an agent chat (templates/agents/chat/_terminal.html).
//
// xterm.js draws the shell that the server keeps for this chat
// (apps/agents/terminal/); the socket carries bytes both ways and a few JSON
// control messages (apps/agents/consumers.py). Loaded as a module, only on
// agent chat pages; xterm's own files come from the URLs the page gives
// (hashed names in production).
//
// Flow control: the server sends at most a window of output ahead of what
// this tab has shown, so the tab acknowledges what xterm has parsed. A tab
// that falls too far behind anyway is dropped (close code 4408) and
// reconnects at once: the scrollback it gets is the screen it missed.
//
// "Attach last command and output" reads the command and its output from the
// screen buffer between the shell's OSC 133 marks (A prompt, B command, C
// output, D;status end), which the server's bash and zsh setup prints. Any
// other shell prints none: the button then attaches the visible screen and
// says so.

const ACK_STEP = 32 * 1024; // acknowledge after this much output has been shown
const CLOSE_FAILED = 4400;
const CLOSE_DROPPED = 4408;
const CLOSE_ENDED = 4410;
const REFUSED = [4401, 4403, 4404];
const ATTACH_MAX_LINES = 200;
const ATTACH_MAX_CHARS = 12000;

const panel = document.querySelector("[data-terminal]");
if (panel) {
  start(panel).catch((error) => {
    const status = panel.querySelector("[data-terminal-status]");
    if (status) status.textContent = `The terminal could not start: ${error.message}`;
    throw error;
  });
}

function themeFrom(element) {
  // xterm holds colours as values, not CSS variables: read the page's tokens.
  const styles = getComputedStyle(element);
  const token = (name) => styles.getPropertyValue(name).trim();
  return {
    background: token("--term-bg"),
    foreground: token("--term-fg"),
    cursor: token("--term-cursor"),
    cursorAccent: token("--term-bg"),
    selectionBackground: token("--term-selection"),
  };
}

async function start(panel) {
  const [{ Terminal }, { FitAddon }] = await Promise.all([
    import(panel.dataset.xterm),
    import(panel.dataset.fit),
  ]);
  const screen = panel.querySelector("[data-terminal-screen]");
  const status = panel.querySelector("[data-terminal-status]");
  const attachButton = panel.querySelector("[data-terminal-attach]");
  const restartButton = panel.querySelector("[data-terminal-restart]");
  const fixLink = panel.querySelector("[data-terminal-fix]");
  // The panel's own Hide/Show and the chat header's "Hide terminal".
  const toggles = document.querySelectorAll("[data-terminal-toggle]");
  const body = panel.querySelector("[data-terminal-body]");

  const terminal = new Terminal({
    scrollback: 5000,
    cursorBlink: true,
    fontFamily: getComputedStyle(screen).fontFamily,
    fontSize: parseFloat(getComputedStyle(screen).fontSize) || 13,
    theme: themeFrom(panel),
  });
  const fit = new FitAddon();
  terminal.loadAddon(fit);
  terminal.open(screen);
  window.jarvisTerminal = terminal; // for the browser tests and the curious

  const marks = shellMarks(terminal);
  const say = (text, state) => {
    status.textContent = text;
    status.dataset.state = state;
  };

  // fit() measures the element: a hidden one has no size, and fitting then
  // would leave an 80-column terminal in a wider panel. Hiding the panel
  // only hides it: the shell keeps running and the socket stays open.
  const refit = () => {
    if (!body.hidden && screen.offsetWidth > 0) fit.fit();
  };
  new ResizeObserver(refit).observe(screen);
  const setOpen = (open) => {
    body.hidden = !open;
    panel.dataset.open = String(open);
    for (const toggle of toggles) {
      const label = open ? toggle.dataset.openLabel : toggle.dataset.closedLabel;
      toggle.textContent = label || (open ? "Hide" : "Show");
      toggle.setAttribute("aria-expanded", String(open));
    }
    if (open) refit();
  };
  for (const toggle of toggles) toggle.addEventListener("click", () => setOpen(body.hidden));
  setOpen(true);

  let socket = null;
  let retryDelay = 0; // the first retry is at once: a dropped tab may see its socket cut
  let retryTimer = null;
  const encoder = new TextEncoder();

  const sendBytes = (bytes) => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(bytes);
  };
  const sendJson = (message) => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  };
  terminal.onData((text) => sendBytes(encoder.encode(text)));
  terminal.onBinary((text) => sendBytes(Uint8Array.from(text, (c) => c.charCodeAt(0))));
  terminal.onResize(({ cols, rows }) => sendJson({ type: "resize", cols, rows }));

  const connect = () => {
    clearTimeout(retryTimer);
    restartButton.hidden = true;
    fixLink.hidden = true;
    const url = new URL(panel.dataset.socket, window.location.href);
    url.protocol = window.location.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("cols", terminal.cols);
    url.searchParams.set("rows", terminal.rows);
    const current = new WebSocket(url);
    current.binaryType = "arraybuffer";
    socket = current;
    let received = 0; // output of this connection that xterm has parsed
    let acked = 0;
    let failed = false;
    current.onmessage = (event) => {
      if (socket !== current) return;
      if (typeof event.data !== "string") {
        const data = new Uint8Array(event.data);
        terminal.write(data, () => {
          if (socket !== current) return;
          received += data.length;
          if (received - acked >= ACK_STEP) {
            acked = received;
            sendJson({ type: "ack", bytes: received });
          }
        });
        return;
      }
      const message = JSON.parse(event.data);
      if (message.type === "ready") {
        retryDelay = 0;
        // The scrollback that follows is the whole screen: start clean. A
        // full reset (ESC c) written in line, so output of an earlier
        // connection still waiting to be parsed lands before it, not after.
        terminal.write("\x1bc", () => marks.reset(message.marks));
        say("Connected", "live");
        if (message.cols !== terminal.cols || message.rows !== terminal.rows) {
          sendJson({ type: "resize", cols: terminal.cols, rows: terminal.rows });
        }
      } else if (message.type === "error") {
        failed = true;
        say(message.message, "error");
        if (message.fix_url) {
          fixLink.href = message.fix_url;
          fixLink.hidden = false;
        }
        restartButton.textContent = "Try again";
        restartButton.hidden = false;
      } else if (message.type === "closed") {
        failed = true;
        say(`${message.reason}.`, "ended");
        restartButton.textContent = "Start a new shell";
        restartButton.hidden = false;
      } else if (message.type === "notice") {
        say(message.message, "notice");
      }
    };
    current.onclose = (event) => {
      if (socket !== current) return;
      socket = null;
      if (event.code === CLOSE_DROPPED) {
        say("Catching up…", "catching-up");
        connect();
      } else if (failed || event.code === CLOSE_FAILED || event.code === CLOSE_ENDED) {
        // The message said why; the button offers the next step.
      } else if (REFUSED.includes(event.code)) {
        say("This terminal is not available to you.", "error");
      } else {
        // A restart of the server, a lost network, or a drop whose close
        // frame was cut off: try again at once, then slower each time.
        say("Disconnected; reconnecting…", "offline");
        retryTimer = setTimeout(connect, retryDelay);
        retryDelay = Math.min(Math.max(retryDelay * 2, 500), 30000);
      }
    };
  };
  restartButton.addEventListener("click", () => {
    say("Connecting…", "connecting");
    connect();
  });

  const updateAttach = () => {
    if (marks.available()) {
      attachButton.textContent = "Attach last command and output";
      attachButton.title = "Adds the last command you ran here and its output to your message.";
      attachButton.disabled = !marks.last();
      if (!marks.last()) attachButton.title = "No command has finished in this terminal yet.";
    } else {
      attachButton.textContent = "Attach visible screen";
      attachButton.title =
        "This shell sends no command marks (bash and zsh do), so the visible screen is attached instead.";
      attachButton.disabled = false;
    }
    attachButton.dataset.mode = marks.available() ? "command" : "screen";
  };
  marks.onChange(updateAttach);
  updateAttach();
  attachButton.addEventListener("click", () => {
    const text = marks.available() ? lastCommandText(terminal, marks.last()) : screenText(terminal);
    if (text) addToComposer(text);
  });

  say("Connecting…", "connecting");
  connect();
}

// --- shell marks ---------------------------------------------------------

function shellMarks(terminal) {
  let seen = false;
  let promptStart = null; // A: where the prompt begins
  let commandStart = null; // B: where the typed command begins
  let outputStart = null; // C: where its output begins
  let latest = null; // the last finished command: {command, output, status}
  const listeners = [];
  const changed = () => listeners.forEach((listener) => listener());
  const here = () => {
    const marker = terminal.registerMarker(0);
    return marker ? { marker, x: terminal.buffer.active.cursorX } : null;
  };
  terminal.parser.registerOscHandler(133, (data) => {
    const [kind, status] = data.split(";");
    if (!seen) {
      seen = true;
      changed();
    }
    if (kind === "A") {
      promptStart = here();
      commandStart = null;
    } else if (kind === "B") {
      commandStart = here();
    } else if (kind === "C") {
      outputStart = here();
    } else if (kind === "D" && outputStart) {
      // Without B (a prompt framework rebuilt PS1), the command is read from
      // the prompt's start, prompt included.
      latest = { command: commandStart || promptStart, output: outputStart, end: here(), status };
      commandStart = null;
      outputStart = null;
      changed();
    }
    return true;
  });
  return {
    available: () => seen,
    last: () => latest,
    reset(known) {
      seen = Boolean(known);
      promptStart = commandStart = outputStart = latest = null;
      changed();
    },
    onChange: (listener) => listeners.push(listener),
  };
}

function lineOf(position, fallback) {
  if (!position || position.marker.isDisposed || position.marker.line < 0) return fallback;
  return position.marker.line;
}

// The text from one position to another, wrapped lines joined back together.
function textBetween(terminal, from, to) {
  const buffer = terminal.buffer.active;
  const lines = [];
  for (let y = from.line; y <= to.line; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const start = y === from.line ? from.x : 0;
    const end = y === to.line ? to.x : line.length;
    const text = line.translateToString(true, start, end);
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines;
}

function lastCommandText(terminal, last) {
  if (!last) return "";
  const outputLine = lineOf(last.output, 0);
  const endLine = lineOf(last.end, terminal.buffer.active.length - 1);
  let command = "";
  if (last.command && !last.command.marker.isDisposed) {
    command = textBetween(
      terminal,
      { line: last.command.marker.line, x: last.command.x },
      { line: Math.max(last.command.marker.line, outputLine - 1), x: terminal.cols },
    )
      .join("\n")
      .trim();
  }
  let output = textBetween(
    terminal,
    { line: outputLine, x: last.output && !last.output.marker.isDisposed ? last.output.x : 0 },
    { line: endLine, x: last.end && !last.end.marker.isDisposed ? last.end.x : terminal.cols },
  );
  while (output.length && output[output.length - 1].trim() === "") output.pop();
  const scrolledAway = !last.output || last.output.marker.isDisposed;
  const cut = output.length > ATTACH_MAX_LINES || scrolledAway;
  output = output.slice(-ATTACH_MAX_LINES);
  let body = output.join("\n");
  if (body.length > ATTACH_MAX_CHARS) body = body.slice(-ATTACH_MAX_CHARS);
  const status = last.status === undefined ? "" : ` (exit status ${last.status})`;
  const note = cut ? "[… earlier output left out …]\n" : "";
  return `Last command in the terminal${status}:\n\n\`\`\`console\n$ ${command}\n${note}${body}\n\`\`\``;
}

function screenText(terminal) {
  const buffer = terminal.buffer.active;
  const lines = textBetween(
    terminal,
    { line: buffer.viewportY, x: 0 },
    { line: buffer.viewportY + terminal.rows - 1, x: terminal.cols },
  );
  while (lines.length && lines[lines.length - 1].trim() === "") lines.pop();
  return `The terminal's screen:\n\n\`\`\`console\n${lines.join("\n")}\n\`\`\``;
}

function addToComposer(text) {
  const composer = document.getElementById("composer-text");
  if (!composer) return;
  const before = composer.value.replace(/\s+$/, "");
  composer.value = before ? `${before}\n\n${text}\n` : `${text}\n`;
  composer.dispatchEvent(new Event("input", { bubbles: true }));
  composer.focus();
  composer.setSelectionRange(composer.value.length, composer.value.length);
}
