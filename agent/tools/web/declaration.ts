/**
 * The web tools' declarations (toolset "web"); their implementation (`tools.ts`, the page extraction)
 * loads on the first call. `web_search` exists only with a search provider.
 */

import { z } from "zod";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool } from "../../types.js";
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

/** `web_search` as the model gets it. */
export const webSearchParameters = z.object({
  query: z.string().min(1),
  limit: z.number().int().min(1).max(20).optional().describe("Results to return (default 5)."),
});

/** `web_extract` as the model gets it. */
export const webExtractParameters = z.object({
  url: z.string().min(1),
  max_chars: z.number().int().min(500).max(200_000).optional().describe("Cap on the text (default 40000)."),
});

const webRuns = runsFrom(() => import("./tools.js"), "webToolRuns");

const webSearchTool = declareTool<typeof webSearchParameters, WebToolsDeps>({
  name: "web_search",
  description: "Search the web. Returns titles, URLs and snippets; open a result with web_extract.",
  parameters: webSearchParameters,
  toolset: "web",
  label: (args) => `🔎 ${args.query}`,
  implementation: webRuns("web_search"),
});

const webExtractTool = declareTool<typeof webExtractParameters, WebToolsDeps>({
  name: "web_extract",
  description:
    "Open a web page (or a PDF) by URL and read its main text as Markdown, with its title and final URL.",
  parameters: webExtractParameters,
  toolset: "web",
  label: (args) => `🌐 ${args.url}`,
  implementation: webRuns("web_extract"),
});

/** The web tools, bound to `deps`: `web_search` with a search provider, `web_extract` always. */
export function webTools(deps: WebToolsDeps): Tool[] {
  return [...(deps.search ? [webSearchTool] : []), webExtractTool].map((tool) => tool.with(deps));
}
