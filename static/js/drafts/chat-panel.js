// The editor's side of the chat panel (chat.js drives the composer and the
// reply frames, as on the chat page): unsaved text is saved before a message
// goes, a review link in a reply opens the review here instead of reloading,
// and the newest reply stays in view while it streams.
//
// Exports: chatPanelStart() - wire all three.
import { anyDirty, page } from "./state.js";
import { activate } from "./tabs.js";
import { saveAll } from "./save.js";
import { openReview } from "./review.js";

export function chatPanelStart() {
  const chatPane = page.chatPane;
  const chatMessages = page.chatMessages;

  // A review link in the chat panel opens the review here instead of reloading.
  document.addEventListener("click", function (event) {
    const link = event.target.closest ? event.target.closest("a[href]") : null;
    if (!link || !chatPane.contains(link) || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const url = new URL(link.href, window.location.href);
    if (url.origin !== window.location.origin || url.pathname !== page.urls.urlEditor) return;
    event.preventDefault();
    const proposal = url.searchParams.get("proposal");
    const file = url.searchParams.get("file");
    if (proposal) openReview(proposal);
    else if (file && page.root.querySelector('a[data-file="' + window.CSS.escape(file) + '"]')) activate(file);
  });

  // The assistant reads the file from disk: unsaved text is saved before a
  // message goes, so it sees what the person sees (and a new chat, which
  // reloads the page, loses nothing).
  document.addEventListener("htmx:confirm", function (event) {
    if (event.detail.elt !== page.composer || !anyDirty()) return;
    event.preventDefault();
    saveAll().then(function (ok) {
      if (ok) event.detail.issueRequest(true);
    });
  });

  // Keep the newest reply in view while it streams, unless the reader scrolled up.
  let pinned = true;
  chatMessages.addEventListener("scroll", function () {
    pinned = chatMessages.scrollTop + chatMessages.clientHeight >= chatMessages.scrollHeight - 80;
  });
  new MutationObserver(function () {
    if (pinned) chatMessages.scrollTop = chatMessages.scrollHeight;
  }).observe(chatMessages, { childList: true, subtree: true, characterData: true });
}
