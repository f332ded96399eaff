/**
 * The model's Markdown → text Home Assistant speaks or shows: code fences and inline code lose their
 * backticks, links keep their text, emphasis and heading marks go, list bullets become plain lines, pictographs go (a voice reads them out by name, or as noise).
 * Replies are one message (no chunking): a spoken answer is not split.
 */

/** Markdown as plain text for speech. */
export function toSpeech(markdown: string): string {
  return markdown
    .replace(/```[a-z0-9_-]*\n?([\s\S]*?)```/gi, "$1")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .replace(/^#{1,6}\s+/gm, "")
    .replace(/^[ \t]*[-*+][ \t]+/gm, "")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[^\w*])[*_]([^*_\n]+)[*_](?=[^\w*]|$)/g, "$1$2")
    .replace(/\p{Extended_Pictographic}\uFE0F?\s?/gu, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
