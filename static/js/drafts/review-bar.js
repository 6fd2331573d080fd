// The lines above the editor about suggestions: the offer ("The assistant
// suggested 2 changes", with its Review button) over a file that has one
// waiting, and the bar over a review (progress, a warning when the file has
// changed since). Painting only: review.js answers the buttons.
//
// Exports: paintOffer(tab), paintReviewBar(tab).
import { page, pendingFor } from "./state.js";

export function paintOffer(tab) {
  const offerEl = page.offerEl;
  offerEl.textContent = "";
  const list = tab && tab.view === "file" ? pendingFor(tab.name) : [];
  offerEl.hidden = !list.length;
  list.forEach(function (p) {
    const line = document.createElement("span");
    line.className = "drafts-offer__item";
    const text = document.createElement("span");
    const count = p.changes ? p.changes + " change" + (p.changes === 1 ? "" : "s") : "changes";
    text.textContent = "✎ The assistant suggested " + count + " to " + p.filename + ".";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button button--small button--primary";
    button.setAttribute("data-testid", "review-suggestion");
    button.setAttribute("data-proposal", p.id); // review.js opens it (reviewStart)
    const resumed = tab.review && tab.review.proposal.id === p.id;
    button.textContent = resumed ? "Back to the review" : "Review suggestion";
    line.appendChild(text);
    line.appendChild(button);
    offerEl.appendChild(line);
  });
}

export function paintReviewBar(tab) {
  const reviewBar = page.reviewBar;
  const review = tab.view === "review" ? tab.review : null;
  reviewBar.hidden = !review;
  if (!review) return;
  reviewBar.querySelector("[data-review-title]").textContent = "Suggested changes to " + tab.name;
  reviewBar.querySelector("[data-review-progress]").textContent =
    review.answered() + " of " + review.total() + " answered";
  const warning = reviewBar.querySelector("[data-review-warning]");
  const stale = review.conflict || (tab.hash !== review.proposal.base_hash
    ? tab.name + " has changed since this suggestion was made, so it can no longer be applied. Discard it and ask again."
    : "");
  warning.textContent = stale;
  warning.hidden = !stale;
  reviewBar.toggleAttribute("data-busy", !!review.applying);
}
