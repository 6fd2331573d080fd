// What kind of file a name is, and the CodeMirror mode it is edited in.
//
// Exports: isMarkdown(name), isTex(name), modeFor(name).

export function isMarkdown(name) { return /\.(md|markdown)$/i.test(name); }

export function isTex(name) { return /\.tex$/i.test(name); }

export function modeFor(name) {
  if (isMarkdown(name)) return { name: "markdown", fencedCodeBlockHighlighting: false };
  if (isTex(name)) return "stex";
  return "text/plain";
}
