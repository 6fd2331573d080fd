// Web search on the chat page (apps.websearch): the Web toggle counts for one
// message, and a private chat's search card says its search was sent.

const composer = () => document.getElementById("composer");

document.addEventListener("htmx:afterRequest", (event) => {
  const element = event.detail.elt;
  if (!event.detail.successful || !element) return;
  if (element === composer()) {
    // Ticked for the message just sent, not for the ones after it.
    const toggle = element.querySelector("[data-web-toggle]");
    if (toggle) toggle.checked = false;
    return;
  }
  if (element.matches && element.matches("[data-web-search-go]")) {
    const buttons = element.closest("[data-web-card-buttons]");
    if (!buttons) return;
    const sent = document.createElement("p");
    sent.className = "small muted";
    sent.setAttribute("role", "status");
    sent.textContent = "Sent: searching the web…";
    buttons.replaceWith(sent);
  }
});
