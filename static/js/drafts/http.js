// Talking to Jarvis: JSON requests that carry the CSRF token and always
// resolve, with an error message the person can read when anything failed.
//
// Exports:
//   request(url, {method, body}) -> Promise<{ok, status, data}>
//   fill(template, id) - a template URL (page.urls.*) with its placeholder id
//                        replaced by a real one.
import { page } from "./state.js";

const ID = "987654321"; // the placeholder in the template's URLs

export function fill(template, id) {
  var at = template.lastIndexOf(ID);
  return template.slice(0, at) + String(id) + template.slice(at + ID.length);
}

export function request(url, options) {
  options = options || {};
  var init = { method: options.method || "GET", credentials: "same-origin", headers: { Accept: "application/json" } };
  if (init.method !== "GET") init.headers["X-CSRFToken"] = page.csrf;
  if (options.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  return fetch(url, init).then(function (response) {
    return response.text().then(function (body) {
      var data;
      try {
        data = JSON.parse(body);
      } catch (err) {
        data = { error: "Jarvis answered " + response.status + " " + response.statusText + "." };
      }
      return { ok: response.ok, status: response.status, data: data };
    });
  }, function () {
    return { ok: false, status: 0, data: { error: "Could not reach Jarvis. Check the connection and try again." } };
  });
}
