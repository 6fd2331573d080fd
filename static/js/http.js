// Talking to Jarvis from a page's own scripts (htmx's requests take the
// shell's error path in app.js instead): every request that changes
// something carries the CSRF token the page was rendered with, and every
// request resolves, never rejects, with a reason the person can read when it
// failed, so no caller forgets the connection dropping.
//
// The token is the one base.html gives htmx on <body hx-headers>: every page
// has it, a form or not, and CSRF_COOKIE_HTTPONLY stays irrelevant.
//
// Exports:
//   csrfToken() - the page's CSRF token ("" on a page without one).
//   request(url, {method, json, form, accept}) -> Promise<answer>
//       json: a value sent as a JSON body; form: a FormData sent as it is;
//       accept: "json" asks for JSON. The answer is {ok, status, text, data,
//       error}: data is the body parsed as JSON (null when it is not JSON),
//       error a sentence for the person when it failed or, asked for JSON,
//       is not JSON ("" otherwise; a JSON body's own `error` first).
//   NO_ANSWER - what error says when Jarvis could not be reached (status 0).

export const NO_ANSWER = "Could not reach Jarvis. Check the connection and try again.";

export function csrfToken() {
  const headers = document.body ? document.body.getAttribute("hx-headers") : null;
  try {
    return JSON.parse(headers || "{}")["X-CSRFToken"] || "";
  } catch (error) {
    return ""; // not JSON: the server refuses the request and says why
  }
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    return null;
  }
}

export function request(url, options = {}) {
  const method = (options.method || "GET").toUpperCase();
  const headers = {};
  let body;
  if (options.accept === "json") headers.Accept = "application/json";
  if (method !== "GET" && method !== "HEAD") headers["X-CSRFToken"] = csrfToken();
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.form) {
    body = options.form; // the browser writes the multipart boundary
  }
  return fetch(url, { method, headers, body, credentials: "same-origin" }).then(
    (response) => response.text().then((text) => {
      const data = parsed(text);
      const said = data && typeof data.error === "string" ? data.error : "";
      const unread = !response.ok || (options.accept === "json" && data === null);
      const error = said || (unread ? "Jarvis answered " + response.status + " " + response.statusText + "." : "");
      return { ok: response.ok, status: response.status, text, data, error };
    }),
    () => ({ ok: false, status: 0, text: "", data: null, error: NO_ANSWER })
  );
}
