// A suggestion's review, built into a CodeMirror Doc of its own.
//
// The review is never drawn over the person's text: it is a separate,
// read-only Doc, so a save (which reads the file's Doc) cannot reach the
// two-versions-at-once text on screen, and switching tabs and back finds the
// review as it was (line classes and widgets belong to the Doc).
//
// The Doc is constructed from the proposal, not patched: lines outside the
// hunks as they are; inside a hunk, the lines that stay, then the removed and
// added ones tinted (only those in old_spans/new_spans). A replacement becomes
// a Current | Suggested widget when the pane is wide enough and contributes no
// lines to the Doc, so nothing is shown twice. Above each hunk sits its
// accept/reject control (a line widget).
//
// Exports:
//   Review  - new Review(proposal, {mode, onChange}); .render(wide) builds the
//             Doc; answer/answerAll record decisions; answered, total,
//             accepted, complete report them.
//   WIDE_PX - the editor width from which a replacement shows as columns.

export const WIDE_PX = 720; // below this, two columns of text are too narrow to read
const LINE_END = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/g;

// Python's str.splitlines(keepends=True): the server's hunk offsets count these lines.
function linesOf(text) {
  const out = [];
  let start = 0;
  let match;
  LINE_END.lastIndex = 0;
  while ((match = LINE_END.exec(text))) {
    out.push(text.slice(start, match.index + match[0].length));
    start = match.index + match[0].length;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

function bare(line) {
  return line.replace(/(\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])$/, "");
}

function spanEnd(spans, i) {
  for (let k = 0; k < spans.length; k++) {
    if (i >= spans[k][0] && i < spans[k][1]) return spans[k][1];
  }
  return -1;
}

// A hunk as rows: context ("same"), then at each change the removed lines
// and the added ones. Equal stretches line up on both sides, so walking both
// sides together and consuming each changed span finds every change in place.
function hunkRows(hunk) {
  const rows = [];
  const oldLines = hunk.old_lines;
  const newLines = hunk.new_lines;
  let i = 0;
  let j = 0;
  while (i < oldLines.length || j < newLines.length) {
    let oldEnd = spanEnd(hunk.old_spans, i);
    let newEnd = spanEnd(hunk.new_spans, j);
    if (oldEnd < 0 && newEnd < 0) {
      if (i < oldLines.length && j < newLines.length) {
        rows.push({ kind: "same", text: oldLines[i] });
        i++;
        j++;
        continue;
      }
      // Should not happen (both sides end together); show what is left as changed.
      oldEnd = i < oldLines.length ? oldLines.length : -1;
      newEnd = j < newLines.length ? newLines.length : -1;
    }
    for (; oldEnd >= 0 && i < oldEnd; i++) rows.push({ kind: "remove", text: oldLines[i] });
    for (; newEnd >= 0 && j < newEnd; j++) rows.push({ kind: "add", text: newLines[j] });
  }
  return rows;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function countSpans(spans) {
  return spans.reduce(function (sum, span) { return sum + span[1] - span[0]; }, 0);
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function describe(hunk) {
  const removed = countSpans(hunk.old_spans);
  const added = countSpans(hunk.new_spans);
  if (hunk.kind === "add") return plural(added, "line") + " added";
  if (hunk.kind === "remove") return plural(removed, "line") + " removed";
  return plural(removed, "line") + " replaced by " + added;
}

export function Review(proposal, options) {
  this.proposal = proposal;
  this.mode = options.mode;
  this.onChange = options.onChange;
  this.decisions = {}; // hunk index -> "accept" | "reject"
  this.controls = {}; // hunk index -> widget node
  this.doc = null;
  this.wide = null;
  this.firstLine = 0;
}

Review.prototype.total = function () { return this.proposal.hunks.length; };

Review.prototype.answered = function () {
  const self = this;
  return this.proposal.hunks.filter(function (h) { return self.decisions[h.index]; }).length;
};

Review.prototype.accepted = function () {
  const self = this;
  return this.proposal.hunks
    .filter(function (h) { return self.decisions[h.index] === "accept"; })
    .map(function (h) { return h.index; });
};

Review.prototype.complete = function () { return this.answered() === this.total(); };

Review.prototype.answer = function (index, decision) {
  this.decisions[index] = decision;
  this.paint(index);
  this.onChange(this);
};

Review.prototype.answerAll = function (decision) {
  const self = this;
  this.proposal.hunks.forEach(function (h) {
    self.decisions[h.index] = decision;
    self.paint(h.index);
  });
  this.onChange(this);
};

Review.prototype.paint = function (index) {
  const node = this.controls[index];
  if (!node) return;
  const decision = this.decisions[index] || "";
  node.setAttribute("data-answer", decision);
  node.querySelectorAll("[data-answer-button]").forEach(function (button) {
    button.setAttribute("aria-pressed", String(button.getAttribute("data-answer-button") === decision));
  });
  node.querySelector("[data-answer-state]").textContent =
    decision === "accept" ? "Accepted" : decision === "reject" ? "Rejected" : "";
};

Review.prototype.control = function (hunk, split) {
  const self = this;
  const node = el("div", "drafts-hunk" + (split ? " drafts-hunk--split" : ""));
  node.setAttribute("data-testid", "hunk");
  node.setAttribute("data-hunk", String(hunk.index));
  const label = el("span", "drafts-hunk__label");
  label.appendChild(el("strong", "", "Change " + (hunk.index + 1) + " of " + this.total()));
  label.appendChild(document.createTextNode(" · " + describe(hunk)));
  node.appendChild(label);
  node.appendChild(el("span", "drafts-hunk__state", ""));
  node.lastChild.setAttribute("data-answer-state", "");
  const buttons = el("span", "drafts-hunk__buttons");
  [["accept", "Accept"], ["reject", "Reject"]].forEach(function (pair) {
    const button = el("button", "button button--small drafts-hunk__" + pair[0], pair[1]);
    button.type = "button";
    button.setAttribute("data-answer-button", pair[0]);
    button.setAttribute("aria-pressed", "false");
    button.setAttribute("aria-label", pair[1] + " change " + (hunk.index + 1));
    button.addEventListener("click", function () { self.answer(hunk.index, pair[0]); });
    buttons.appendChild(button);
  });
  node.appendChild(buttons);
  if (split) node.appendChild(this.columns(hunk));
  this.controls[hunk.index] = node;
  this.paint(hunk.index);
  return node;
};

// Current | Suggested, each side with only its changed lines tinted.
Review.prototype.columns = function (hunk) {
  const grid = el("div", "drafts-split");
  [
    ["Current", hunk.old_lines, hunk.old_spans, "drafts-line--remove"],
    ["Suggested", hunk.new_lines, hunk.new_spans, "drafts-line--add"]
  ].forEach(function (side) {
    const column = el("div", "drafts-split__col");
    column.appendChild(el("div", "drafts-split__title", side[0]));
    const body = el("div", "drafts-split__lines");
    side[1].forEach(function (line, i) {
      const changed = spanEnd(side[2], i) >= 0;
      body.appendChild(el("div", "drafts-split__line" + (changed ? " " + side[3] : ""), bare(line)));
    });
    column.appendChild(body);
    grid.appendChild(column);
  });
  return grid;
};

// (Re)build the Doc for this width; decisions survive a rebuild.
Review.prototype.render = function (wide) {
  const self = this;
  const base = linesOf(this.proposal.base_text);
  const hunks = this.proposal.hunks.slice().sort(function (a, b) { return a.old_start - b.old_start; });
  const lines = [];
  const kinds = [];
  const anchors = []; // {hunk, at: doc line the control goes above, split}
  let position = 0;
  function push(text, kind) { lines.push(bare(text)); kinds.push(kind); }
  hunks.forEach(function (hunk) {
    for (; position < hunk.old_start; position++) push(base[position], "same");
    const split = wide && hunk.kind === "replace";
    anchors.push({ hunk: hunk, at: lines.length, split: split });
    if (!split) hunkRows(hunk).forEach(function (row) { push(row.text, row.kind); });
    position = hunk.old_end;
  });
  for (; position < base.length; position++) push(base[position], "same");

  this.controls = {};
  this.wide = wide;
  this.doc = window.CodeMirror.Doc(lines.join("\n"), this.mode);
  kinds.forEach(function (kind, n) {
    if (kind === "add") self.doc.addLineClass(n, "background", "drafts-line--add");
    if (kind === "remove") self.doc.addLineClass(n, "background", "drafts-line--remove");
  });
  anchors.forEach(function (anchor) {
    const node = self.control(anchor.hunk, anchor.split);
    if (anchor.at < lines.length) {
      self.doc.addLineWidget(anchor.at, node, { above: true });
    } else {
      self.doc.addLineWidget(Math.max(0, lines.length - 1), node, { above: lines.length === 0 });
    }
  });
  this.firstLine = anchors.length ? Math.min(anchors[0].at, Math.max(0, lines.length - 1)) : 0;
  return this.doc;
};
