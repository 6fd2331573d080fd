// Talking to Jarvis from the editor: JSON requests through the shared
// static/js/http.js (the CSRF token, a reason the person can read when
// anything failed), in the shape the editor's modules read.
//
// Exports:
//   request(url, {method, body}) -> Promise<{ok, status, data}>; data is the
//       JSON answer, or {error} when there was none to read.
//   fill(template, id) - a template URL (page.urls.*) with its placeholder id
//                        replaced by a real one.
import { request as send } from "../http.js";

const ID = "987654321"; // the placeholder in the template's URLs

export function fill(template, id) {
  const at = template.lastIndexOf(ID);
  return template.slice(0, at) + String(id) + template.slice(at + ID.length);
}

export function request(url, options = {}) {
  return send(url, { method: options.method, json: options.body, accept: "json" }).then((answer) => ({
    ok: answer.ok,
    status: answer.status,
    data: answer.data !== null ? answer.data : { error: answer.error },
  }));
}
