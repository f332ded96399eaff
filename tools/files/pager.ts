/** `cat -n`-style pages of lines: right-aligned numbers, a tab, long lines cut. */
import { formatCount } from "./common.js";

/** Limits of one page. */
export interface PageLimits {
  /** 1-based first line. */
  offset: number;
  /** Lines per page. */
  limit: number;
  /** Characters kept of each line. */
  maxLineChars: number;
  /** Characters of output after which the page stops early. */
  maxOutputChars: number;
}

/** A page of numbered lines and what the footer needs to say. */
export interface Page {
  body: string;
  /** Last line shown (0 when none). */
  lastShown: number;
  totalLines: number;
  /** The page stopped before `limit` lines because the output reached `maxOutputChars`. */
  cutForSize: boolean;
}

function numbered(n: number, line: string, maxLineChars: number): string {
  const text =
    line.length > maxLineChars
      ? `${line.slice(0, maxLineChars)} … [line cut: ${formatCount(line.length - maxLineChars)} more characters]`
      : line;
  return `${String(n).padStart(6)}\t${text}`;
}

/** Lines of an in-memory text as readline yields a file's: a final line break ends the last line. */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Reads all `lines` (to count them) and numbers those of the page. */
export async function pageLines(
  lines: AsyncIterable<string> | Iterable<string>,
  limits: PageLimits,
  signal?: AbortSignal,
): Promise<Page> {
  const out: string[] = [];
  let chars = 0;
  let n = 0;
  let lastShown = 0;
  let cutForSize = false;
  const end = limits.offset + limits.limit - 1;
  for await (const raw of lines) {
    n++;
    if ((n & 0xfff) === 0) signal?.throwIfAborted();
    if (n < limits.offset || n > end || cutForSize) continue;
    const line = numbered(n, raw.endsWith("\r") ? raw.slice(0, -1) : raw, limits.maxLineChars);
    if (chars + line.length + 1 > limits.maxOutputChars && out.length > 0) {
      cutForSize = true;
      continue;
    }
    out.push(line);
    chars += line.length + 1;
    lastShown = n;
  }
  return { body: out.join("\n"), lastShown, totalLines: n, cutForSize };
}

/** The footer: what was shown, of how many lines, and the offset of the next page. */
export function pageFooter(page: Page, offset: number, maxOutputChars: number): string {
  const { lastShown, totalLines } = page;
  if (offset === 1 && lastShown === totalLines) return `(${formatCount(totalLines)} lines, whole file)`;
  const shown = `lines ${formatCount(offset)}–${formatCount(lastShown)} of ${formatCount(totalLines)}`;
  if (lastShown >= totalLines) return `(${shown}; end of file)`;
  const why = page.cutForSize ? `; stopped at ${formatCount(maxOutputChars)} characters of output` : "";
  return `(${shown}${why}; next page: offset=${lastShown + 1})`;
}
