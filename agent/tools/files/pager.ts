/**
 * `cat -n`-style pages of lines: right-aligned numbers, a tab, long lines cut. The text comes as a
 * stream of chunks (bytes or strings) and is paged in bounded memory: only the page's lines are built,
 * each at most `maxLineChars` long, whatever the size of the file or the length of its lines.
 */
import { formatCount } from "./common.js";
import { LineSplitter } from "./line-splitter.js";

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

/** How byte chunks are decoded (a BOM of the same encoding is dropped). */
export type TextEncodingName = "utf-8" | "utf-16le" | "utf-16be";

/** A text as chunks: a file's read stream, a helper's chunks, or one in-memory string. */
export type TextChunks = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>;

/** Options of {@link pageLines}. */
export interface PageOptions {
  /** Encoding of byte chunks (string chunks are text already). @defaultValue "utf-8" */
  encoding?: TextEncodingName;
  /** Checked between chunks; the page then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

function numbered(n: number, text: string, cutChars: number): string {
  const cut = cutChars > 0 ? ` … [line cut: ${formatCount(cutChars)} more characters]` : "";
  return `${String(n).padStart(6)}\t${text}${cut}`;
}

/**
 * Reads all of `chunks` (to count the lines) and numbers the lines of the page. Bad byte sequences
 * become U+FFFD. Memory stays within one chunk plus the page.
 */
export async function pageLines(
  chunks: TextChunks,
  limits: PageLimits,
  options: PageOptions = {},
): Promise<Page> {
  const { signal } = options;
  const out: string[] = [];
  let chars = 0;
  let lastShown = 0;
  let cutForSize = false;
  const end = limits.offset + limits.limit - 1;
  const splitter = new LineSplitter({
    maxLineChars: limits.maxLineChars,
    wants: (n) => n >= limits.offset && n <= end && !cutForSize,
    onLine: (n, text, cutChars) => {
      const line = numbered(n, text, cutChars);
      if (chars + line.length + 1 > limits.maxOutputChars && out.length > 0) {
        cutForSize = true;
        return;
      }
      out.push(line);
      chars += line.length + 1;
      lastShown = n;
    },
  });
  const decoder = new TextDecoder(options.encoding ?? "utf-8");
  let first = true;
  for await (const chunk of chunks) {
    signal?.throwIfAborted();
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    // TextDecoder drops the byte-order mark of byte chunks; a string source may still hold one.
    if (first && typeof chunk === "string" && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length > 0) first = false;
    splitter.push(text);
  }
  splitter.push(decoder.decode());
  splitter.end();
  return { body: out.join("\n"), lastShown, totalLines: splitter.lines, cutForSize };
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
