/**
 * `web_search` and `web_extract` (toolset "web"). Search goes to the configured provider (SearXNG,
 * Brave, Tavily) and is absent when none is configured; extraction fetches a page through the guarded
 * fetch (http(s) only, private addresses refused unless the owner allows them, each redirect re-checked,
 * size and time capped) and returns its readable text as Markdown, PDFs as text.
 */
import { z } from "zod";
import { extractDocumentFromBuffer } from "../../documents/index.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
// The web folder's parts, not its index: the index also exports the HTML converter, whose libraries
// would then load at start-up.
import { extractPage } from "./extract.js";
import type { WebSearchProvider } from "./search/types.js";
import type { AllowPrivate, HtmlConverter } from "./types.js";

/** What the web tools run with. */
export interface WebToolsDeps {
  /** The search provider; without one there is no `web_search`. */
  search?: WebSearchProvider | undefined;
  /** Let fetches reach private and loopback addresses (the owner's choice). @defaultValue false */
  allowPrivate?: AllowPrivate | undefined;
  /** Converts HTML off the event loop (a worker thread) where given. */
  convertHtml?: HtmlConverter | undefined;
}

/** The web tools, bound to `deps`. */
export function webTools(deps: WebToolsDeps): Tool[] {
  const tools: Tool[] = [];
  const search = deps.search;
  if (search) {
    tools.push(
      defineTool({
        name: "web_search",
        description: "Search the web. Returns titles, URLs and snippets; open a result with web_extract.",
        parameters: z.object({
          query: z.string().min(1),
          limit: z.number().int().min(1).max(20).optional().describe("Results to return (default 5)."),
        }),
        toolset: "web",
        label: (args) => `🔎 ${args.query}`,
        async execute(args, ctx) {
          const results = await search.search(args.query, { limit: args.limit ?? 5, signal: ctx.signal });
          if (results.length === 0) return `No results for "${args.query}".`;
          return results.map((r, i) => `${i + 1}. ${r.title}\n   ${r.url}\n   ${r.snippet}`).join("\n");
        },
      }),
    );
  }
  tools.push(
    defineTool({
      name: "web_extract",
      description:
        "Open a web page (or a PDF) by URL and read its main text as Markdown, with its title and final URL.",
      parameters: z.object({
        url: z.string().min(1),
        max_chars: z
          .number()
          .int()
          .min(500)
          .max(200_000)
          .optional()
          .describe("Cap on the text (default 40000)."),
      }),
      toolset: "web",
      label: (args) => `🌐 ${args.url}`,
      async execute(args, ctx) {
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
      },
    }),
  );
  return tools;
}
