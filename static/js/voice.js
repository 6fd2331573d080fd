// Voice on the chat page (apps/voice): dictation into the message box and
// "Read aloud" on a finished reply.
//
// Dictation: the Dictate button records with MediaRecorder until it is
// pressed again or the limit (data-max-seconds) is reached, whichever comes
// first. The recording is turned into 16 kHz mono WAV here (what whisper
// servers read without a converter, and a length the server can check from
// the header), posted to /voice/transcribe/, and the text is put into the
// message box at the cursor: never sent. A refusal (too long, a private chat
// with only a cloud server, a format the server rejects) is said beside the
// button in the server's words.
//
// Read aloud: each reply carries a hidden button (templates/voice/
// _read_aloud.html); it is shown once the reply is finished and has words, when the page's
// <meta name="jarvis-voice-speak"> is on. Pressing it posts to
// /voice/speak/<id>/ and plays the audio through Web Audio (the page's CSP
// allows no blob: media, and Web Audio needs none). Pressing again stops it.

const FINISHED = new Set(["done", "stopped", "interrupted"]);
const WAV_RATE = 16000;

function csrfToken() {
  // base.html gives htmx the token on <body hx-headers>; every page has it.
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch (error) {
    return ""; // the server refuses the request and says why
  }
}

function say(element, words) {
  if (element) element.textContent = words;
}

function clock(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  return Math.floor(whole / 60) + ":" + String(whole % 60).padStart(2, "0");
}

async function post(url, body) {
  // Resolves with {ok, response, error}: a dropped connection is a reason too.
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      body,
      credentials: "same-origin",
    });
  } catch (error) {
    return { ok: false, response: null, error: "Could not reach Jarvis. Check the connection and try again." };
  }
  if (response.ok) return { ok: true, response, error: "" };
  let error = "Jarvis answered " + response.status + " " + response.statusText + ".";
  try {
    const data = await response.json();
    if (data && typeof data.error === "string") error = data.error;
  } catch (ignored) {
    // not JSON: the status line above is what there is to say
  }
  return { ok: false, response, error };
}

// ---- Dictation ----------------------------------------------------------

let recording = null; // {button, status, recorder, stream, chunks, started, limitTimer, ticker}

function encodeWav(samples, rate) {
  const buffer = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(buffer);
  const text = (offset, value) => {
    for (let i = 0; i < value.length; i += 1) view.setUint8(offset + i, value.charCodeAt(i));
  };
  text(0, "RIFF");
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true); // PCM header size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true); // bytes per second
  view.setUint16(32, 2, true); // bytes per frame
  view.setUint16(34, 16, true); // bits per sample
  text(36, "data");
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i += 1) {
    const sample = Math.max(-1, Math.min(1, samples[i]));
    view.setInt16(44 + i * 2, sample < 0 ? sample * 0x8000 : sample * 0x7fff, true);
  }
  return new Blob([buffer], { type: "audio/wav" });
}

async function wavOf(blob, maxSeconds) {
  // An OfflineAudioContext decodes at its own rate: the recording comes out
  // resampled to 16 kHz, then mixed down to one channel and cut at the limit.
  const decoder = new OfflineAudioContext(1, 1, WAV_RATE);
  const audio = await decoder.decodeAudioData(await blob.arrayBuffer());
  const length = Math.min(audio.length, Math.floor(maxSeconds * WAV_RATE));
  const mixed = new Float32Array(length);
  for (let channel = 0; channel < audio.numberOfChannels; channel += 1) {
    const data = audio.getChannelData(channel);
    for (let i = 0; i < length; i += 1) mixed[i] += data[i] / audio.numberOfChannels;
  }
  return encodeWav(mixed, WAV_RATE);
}

function insertIntoComposer(text) {
  const box = document.getElementById("composer-text");
  if (!box) return;
  const start = box.selectionStart ?? box.value.length;
  const end = box.selectionEnd ?? start;
  const before = box.value.slice(0, start);
  const after = box.value.slice(end);
  const lead = before && !/\s$/.test(before) ? " " : "";
  const trail = after && !/^\s/.test(after) ? " " : "";
  box.value = before + lead + text + trail + after;
  const caret = (before + lead + text).length;
  box.focus();
  box.setSelectionRange(caret, caret);
  // The composer's own script (height, Send state) follows typing.
  box.dispatchEvent(new Event("input", { bubbles: true }));
}

function statusOf(button) {
  return button.parentElement ? button.parentElement.querySelector("[data-voice-status]") : null;
}

async function startDictation(button) {
  const status = statusOf(button);
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || !window.MediaRecorder) {
    say(status, "This browser cannot record audio on this page.");
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (error) {
    say(
      status,
      error && error.name === "NotAllowedError"
        ? "The microphone is blocked: allow it for this site to dictate."
        : "No microphone could be opened" + (error && error.message ? ": " + error.message : ".")
    );
    return;
  }
  const maxSeconds = Number(button.dataset.maxSeconds) || 120;
  const recorder = new MediaRecorder(stream);
  const chunks = [];
  recorder.addEventListener("dataavailable", (event) => {
    if (event.data && event.data.size) chunks.push(event.data);
  });
  const state = { button, status, recorder, stream, chunks, started: performance.now(), maxSeconds };
  recorder.addEventListener("stop", () => finishDictation(state));
  recorder.start();
  recording = state;
  button.setAttribute("aria-pressed", "true");
  button.dataset.state = "recording";
  button.textContent = "Stop";
  const tick = () => say(status, "Recording " + clock((performance.now() - state.started) / 1000) + " of " + clock(maxSeconds));
  tick();
  state.ticker = setInterval(tick, 500);
  // The limit is kept here too: the recording stops, and what was said is kept.
  state.limitTimer = setTimeout(() => stopDictation(true), maxSeconds * 1000);
}

function stopDictation(atLimit) {
  if (!recording) return;
  const state = recording;
  recording = null;
  state.atLimit = atLimit;
  clearTimeout(state.limitTimer);
  clearInterval(state.ticker);
  state.seconds = Math.min((performance.now() - state.started) / 1000, state.maxSeconds);
  if (state.recorder.state !== "inactive") state.recorder.stop();
}

async function finishDictation(state) {
  const { button, status } = state;
  state.stream.getTracks().forEach((track) => track.stop());
  button.setAttribute("aria-pressed", "false");
  button.textContent = "Dictate";
  button.dataset.state = "transcribing";
  button.disabled = true;
  say(status, (state.atLimit ? "Stopped at the limit of " + clock(state.maxSeconds) + ". " : "") + "Transcribing…");
  try {
    const recorded = new Blob(state.chunks, { type: state.recorder.mimeType || "audio/webm" });
    let upload;
    let name;
    try {
      upload = await wavOf(recorded, state.maxSeconds);
      name = "dictation.wav";
    } catch (error) {
      // A recording this browser cannot decode goes as it is; the server says if it cannot read it.
      upload = recorded;
      name = "dictation." + ((recorded.type.split("/")[1] || "webm").split(";")[0]);
    }
    const maxBytes = Number(button.dataset.maxBytes) || Infinity;
    if (upload.size > maxBytes) {
      say(status, "The recording is too large to transcribe (" + (upload.size / 1e6).toFixed(1) + " MB); nothing was sent.");
      return;
    }
    const form = new FormData();
    form.append("file", upload, name);
    form.append("seconds", state.seconds.toFixed(2));
    if (button.dataset.chat) form.append("chat", button.dataset.chat);
    const answer = await post(button.dataset.url, form);
    if (!answer.ok) {
      say(status, answer.error);
      return;
    }
    const data = await answer.response.json();
    insertIntoComposer(data.text || "");
    say(status, "Added to the message box: check it, then send.");
  } finally {
    button.disabled = false;
    button.dataset.state = "";
  }
}

// ---- Read aloud -----------------------------------------------------------

let playing = null; // {button, status, context, source}

function speakStatus(button) {
  return document.querySelector('[data-voice-speak-status="' + button.dataset.reply + '"]');
}

function stopReading() {
  if (!playing) return;
  const { button, context, source } = playing;
  playing = null;
  try {
    source.stop();
  } catch (ignored) {
    // already ended
  }
  context.close();
  button.textContent = "Read aloud";
  button.dataset.state = "";
  button.setAttribute("aria-pressed", "false");
}

async function readAloud(button) {
  if (button.dataset.state === "loading") return;
  if (playing && playing.button === button) {
    stopReading();
    return;
  }
  stopReading();
  // Made inside the click, so the browser lets it play once the audio arrives.
  const context = new AudioContext();
  const status = speakStatus(button);
  button.dataset.state = "loading";
  button.textContent = "Reading…";
  say(status, "");
  const answer = await post(button.dataset.voiceSpeak, null);
  let audio = null;
  if (answer.ok) {
    try {
      audio = await context.decodeAudioData(await answer.response.arrayBuffer());
    } catch (error) {
      answer.error = "The speech server's audio could not be played here.";
    }
  }
  if (!audio) {
    context.close();
    button.dataset.state = "";
    button.textContent = "Read aloud";
    say(status, answer.error);
    return;
  }
  const source = context.createBufferSource();
  source.buffer = audio;
  source.connect(context.destination);
  source.addEventListener("ended", () => {
    if (playing && playing.source === source) stopReading();
  });
  playing = { button, status, context, source };
  source.start();
  button.dataset.state = "playing";
  button.dataset.seconds = audio.duration.toFixed(2);
  button.setAttribute("aria-pressed", "true");
  button.textContent = "Stop reading";
  say(status, answer.response.headers.get("X-Voice-Cut") === "1" ? "Reading the first part of this reply." : "");
}

function speakOn() {
  const meta = document.querySelector('meta[name="jarvis-voice-speak"]');
  return Boolean(meta && meta.content === "on");
}

let refreshQueued = false;

function refreshReadAloud() {
  refreshQueued = false;
  const on = speakOn();
  document.querySelectorAll("[data-voice-speak]").forEach((button) => {
    const id = button.dataset.reply;
    const status = document.getElementById("msg-" + id + "-status");
    const answer = document.getElementById("msg-" + id + "-answer");
    const finished = Boolean(status && FINISHED.has(status.dataset.status));
    const worded = Boolean(answer && answer.textContent.trim());
    // The wrapper, not the button: a .button's own display would beat `hidden`.
    const wrapper = button.closest("[data-voice-read]") || button;
    wrapper.hidden = !(on && finished && worded);
  });
}

function queueRefresh() {
  if (refreshQueued) return;
  refreshQueued = true;
  setTimeout(refreshReadAloud, 0);
}

document.addEventListener("click", (event) => {
  const dictate = event.target.closest("[data-voice-dictate]");
  if (dictate && !dictate.disabled) {
    event.preventDefault();
    if (recording && recording.button === dictate) stopDictation(false);
    else if (!recording) startDictation(dictate);
    return;
  }
  const speak = event.target.closest("[data-voice-speak]");
  if (speak) {
    event.preventDefault();
    readAloud(speak);
  }
});

// Replies arrive and finish over the socket (whole blocks swapped in): the
// buttons follow each reply's status as it changes.
new MutationObserver(queueRefresh).observe(document.body, {
  subtree: true,
  childList: true,
  attributes: true,
  attributeFilter: ["data-status"],
});
refreshReadAloud();
