/**
 * Markdown → plain text for platforms that render none (LINE, SMS, iMessage): heading hashes, emphasis
 * and code markers and link syntax dropped (a link shows its address), fence lines removed with their
 * code kept, `-`/`*` bullets as `•`. Nothing else changes, so the words read as the model wrote them.
 */

/** One line outside a code block, without its Markdown markers. */
function plainLine(line: string): string {
  return line
    .replace(/^(\s*)#{1,6}\s+/, "$1")
    .replace(/^(\s*)[-*+]\s+(?=\S)/, "$1• ")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
      label === href ? href : `${label} (${href})`,
    )
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__/g, "$1$2")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1")
    .replace(/(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g, "$1")
    .replace(/(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])/g, "$1")
    .replace(/`([^`\n]+)`/g, "$1");
}

/** The Markdown `markdown` as plain text (code blocks keep their lines as written). */
export function markdownToPlainText(markdown: string): string {
  let fenced = false;
  const out: string[] = [];
  for (const line of markdown.split("\n")) {
    if (/^ {0,3}(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    out.push(fenced ? line : plainLine(line));
  }
  return out.join("\n");
}
