/** `extractPage`: a URL → the Markdown an agent reads, through `safeFetch`. */
import { WebError } from "./errors.js";
import { inlineHtmlConverter } from "./html-converter.js";
import { safeFetch } from "./safe-fetch.js";
import type { ExtractedPage, ExtractOptions } from "./types.js";

const DEFAULT_MAX_CHARS = 40_000;

/** Cuts at the last line break in the final fifth before `maxChars` (else at `maxChars`) and says so. */
export function truncateMarkdown(
  markdown: string,
  maxChars: number,
): { markdown: string; truncated: boolean } {
  if (markdown.length <= maxChars) return { markdown, truncated: false };
  const lineBreak = markdown.lastIndexOf("\n", maxChars);
  const cut = lineBreak >= maxChars * 0.8 ? lineBreak : maxChars;
  const note =
    `\n\n[Truncated: the page has ${markdown.length} characters; this is the first ${cut}. ` +
    "Ask for a more specific page or a larger maxChars to read more.]";
  return { markdown: markdown.slice(0, cut).trimEnd() + note, truncated: true };
}

function fileName(url: string): string {
  const path = new URL(url).pathname;
  return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || url;
}

function jsonText(text: string): string {
  try {
    return "```json\n" + JSON.stringify(JSON.parse(text), null, 2) + "\n```";
  } catch {
    return text;
  }
}

/**
 * Fetches `url` with `safeFetch` (same options, same refusals) and returns its readable content:
 * HTML and XHTML through Readability and turndown, JSON pretty-printed, other text as served, PDF through
 * `options.extractPdf`. Rejects with a `WebError`: the fetch's reasons, `http_status` for a 4xx/5xx answer
 * (retryable for 429 and 5xx), `unsupported_type` for a PDF without `extractPdf`. Rejections of
 * `extractPdf` pass through unchanged.
 */
export async function extractPage(url: string, options: ExtractOptions = {}): Promise<ExtractedPage> {
  const page = await safeFetch(url, options);
  if (page.status >= 400)
    throw new WebError(
      "http_status",
      page.url,
      `${page.url} answered HTTP ${page.status}; the page could not be read`,
      {
        status: page.status,
        retryable: page.status === 429 || page.status >= 500,
      },
    );
  let title = page.url;
  let markdown: string;
  if (page.contentType === "application/pdf") {
    if (!options.extractPdf)
      throw new WebError(
        "unsupported_type",
        page.url,
        `${page.url} is a PDF and PDF reading is not configured here (extractPdf); fetch the bytes with safeFetch instead`,
      );
    markdown = await options.extractPdf(page.bytes, options.signal);
    title = fileName(page.url);
  } else if (page.contentType === "text/html" || page.contentType === "application/xhtml+xml") {
    const convert = options.convertHtml ?? inlineHtmlConverter;
    const html = await convert(page.text ?? "", page.url, options.signal);
    title = html.title || page.url;
    markdown = html.markdown;
  } else if (page.contentType === "application/json" || page.contentType.endsWith("+json")) {
    markdown = jsonText(page.text ?? "");
  } else markdown = page.text ?? "";
  const capped = truncateMarkdown(markdown, options.maxChars ?? DEFAULT_MAX_CHARS);
  return { title, finalUrl: page.url, contentType: page.contentType, ...capped };
}
