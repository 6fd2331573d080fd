// Web search on the chat page (apps.websearch): the Web toggle counts for one
// message. (A private chat's web card needs no script: its Search and Don't
// are plain forms that htmx swaps with the answered card.)

const composer = () => document.getElementById("composer");

document.addEventListener("htmx:afterRequest", (event) => {
  const element = event.detail.elt;
  if (!event.detail.successful || !element || element !== composer()) return;
  // Ticked for the message just sent, not for the ones after it.
  const toggle = element.querySelector("[data-web-toggle]");
  if (toggle) toggle.checked = false;
});
