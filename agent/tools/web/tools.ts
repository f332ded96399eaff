/**
 * What `web_search` and `web_extract` (toolset "web") do; `declaration.ts` declares them. Search goes to the configured provider (SearXNG,
 * Brave, Tavily) and is absent when none is configured; extraction fetches a page through the guarded
 * fetch (http(s) only, private addresses refused unless the owner allows them, each redirect re-checked,
 * size and time capped) and returns its readable text as Markdown, PDFs as text.
 */
import { extractDocumentFromBuffer } from "../../documents/index.js";
import type { ToolExecute } from "../../tool-declaration.js";
import type { WebToolsDeps, webExtractParameters, webSearchParameters } from "./declaration.js";
// The web folder's parts, not its index: the index also exports the HTML converter, whose libraries
// would then load at start-up.
import { extractPage } from "./extract.js";

/** What the web tools do, bound to `deps`, by name. */
export function webToolRuns(deps: WebToolsDeps) {
  const search = deps.search;
  const webSearch: ToolExecute<typeof webSearchParameters> = async (args, ctx) => {
    // Declared only with a provider (declaration.ts).
    if (!search) return { content: "error: no search provider is configured.", isError: true };
    const results = await search.search(args.query, { limit: args.limit ?? 5, signal: ctx.signal });
    if (results.length === 0) return `No results for "${args.query}".`;
    return results.map((r, i) => `${i + 1}. ${r.title}\n   ${r.url}\n   ${r.snippet}`).join("\n");
  };
  const webExtract: ToolExecute<typeof webExtractParameters> = async (args, ctx) => {
    const page = await extractPage(args.url, {
      signal: ctx.signal,
      maxChars: args.max_chars,
      allowPrivate: deps.allowPrivate,
      convertHtml: deps.convertHtml,
      extractPdf: async (bytes, signal) =>
        (await extractDocumentFromBuffer(bytes, { mimeType: "application/pdf", signal })).text,
    });
    const cut = page.truncated ? "\n\n[the page is longer; this is its start]" : "";
    return `# ${page.title || "(untitled)"}\nURL: ${page.finalUrl}\n\n${page.markdown}${cut}`;
  };
  return { web_search: webSearch, web_extract: webExtract };
}
