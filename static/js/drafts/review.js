// Reviewing a suggestion hunk by hunk: opening it in its file's tab (the Doc
// is built by review-doc.js, the offer and the bar painted by review-bar.js),
// and what answering does: once every hunk is answered the accepted ones are
// applied (the server checks the file has not changed since); Discard drops
// the suggestion, writing nothing.
//
// Exports:
//   openReview(id)  open suggestion `id` in its file's tab
//   reviewStart()   wire the offer's Review button and the review bar's
//                   Accept all / Reject all / Discard / Back to the file
import { dirty, page, state } from "./state.js";
import { fill, request } from "./http.js";
import { say } from "./message.js";
import { modeFor } from "./filetypes.js";
import { Review } from "./review-doc.js";
import { paintMarks } from "./marks.js";
import { refreshPreview } from "./preview.js";
import { loadHistory, reload } from "./history.js";
import { paintOffer, paintReviewBar } from "./review-bar.js";
import { activate, show } from "./tabs.js";

export function openReview(id) {
  id = Number(id);
  return request(fill(page.urls.urlProposal, id)).then(function (r) {
    if (!r.ok) {
      say(r.data.error || "Could not open that suggestion.", "error");
      return;
    }
    const proposal = r.data;
    if (proposal.status !== "pending") {
      delete state.pending[proposal.id];
      paintMarks();
      if (state.active) paintOffer(state.active);
      say("That suggestion was already " + (proposal.status === "applied" ? "applied" : "discarded") + ".", "info");
      return;
    }
    state.pending[proposal.id] = { id: proposal.id, filename: proposal.filename, changes: proposal.changes };
    return activate(proposal.filename).then(function (tab) {
      if (!tab) return;
      if (!tab.review || tab.review.proposal.id !== proposal.id) {
        tab.review = new Review(proposal, {
          mode: modeFor(tab.name),
          onChange: function (review) { answered(tab, review); }
        });
      }
      tab.view = "review";
      show(tab);
      page.cm.scrollIntoView({ line: tab.review.firstLine, ch: 0 }, 80);
    });
  });
}

function answered(tab, review) {
  review.conflict = "";
  if (tab === state.active) paintReviewBar(tab);
  if (review.complete()) apply(tab, review);
}

function finishReview(tab, proposalId) {
  delete state.pending[proposalId];
  tab.review = null;
  tab.view = "file";
  if (tab === state.active) {
    show(tab);
    refreshPreview();
    loadHistory();
  }
  paintMarks();
}

function apply(tab, review) {
  if (review.applying) return;
  review.applying = true;
  paintReviewBar(tab);
  const id = review.proposal.id;
  const accepted = review.accepted();
  const wasDirty = dirty(tab);
  request(fill(page.urls.urlApply, id), { method: "POST", body: { accepted: accepted } }).then(function (r) {
    review.applying = false;
    if (!r.ok) {
      review.conflict = r.data.error || "The suggestion could not be applied.";
      say(review.conflict, "error");
      if (tab === state.active) paintReviewBar(tab);
      return;
    }
    reload(tab, r.data.text, r.data.hash);
    finishReview(tab, id);
    if (r.data.status === "applied") {
      say("Applied " + accepted.length + " of " + review.total() + " changes to " + tab.name +
        ". The text before is in History." +
        (wasDirty ? " Your unsaved edits were replaced; Ctrl+Z brings them back." : ""), "success");
    } else {
      say("No change accepted: the suggestion was discarded and nothing was written.", "info");
    }
  });
}

function discard(tab) {
  const id = tab.review.proposal.id;
  request(fill(page.urls.urlDiscard, id), { method: "POST", body: {} }).then(function (r) {
    if (!r.ok) {
      say(r.data.error || "Could not discard the suggestion.", "error");
      return;
    }
    finishReview(tab, id);
    say("Suggestion discarded; nothing was written.", "info");
  });
}

export function reviewStart() {
  page.offerEl.addEventListener("click", function (event) {
    const button = event.target.closest("[data-proposal]");
    if (button) openReview(button.getAttribute("data-proposal"));
  });
  const reviewBar = page.reviewBar;
  reviewBar.querySelectorAll("[data-review-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      if (state.active && state.active.review) state.active.review.answerAll(button.getAttribute("data-review-all"));
    });
  });
  reviewBar.querySelector("[data-review-discard]").addEventListener("click", function () {
    if (state.active && state.active.review) discard(state.active);
  });
  reviewBar.querySelector("[data-review-close]").addEventListener("click", function () {
    if (!state.active) return;
    state.active.view = "file";
    show(state.active);
  });
}
