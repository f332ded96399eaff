/**
 * The web tools of one process: `web_search` when a search provider is configured (`web.search`),
 * `web_extract` always, its HTML converted to Markdown off the main thread.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import { webTools } from "./declaration.js";
import { createWorkerHtmlConverter } from "./html-converter.js";
import { createWebSearchProvider } from "./search/index.js";

/** The settings the web tools read (`HeraldConfig` has this shape). */
export interface WebSettings {
  web: { search?: Record<string, unknown> | undefined; allowPrivate: boolean };
}

/** Builds the web tools; a missing or bad search provider is reported among `unavailable`. */
export function createWebTools(
  config: WebSettings,
  ports: { logger: Logger; unavailable: UnavailableToolset[] },
): { tools: Tool[]; close(): Promise<void> } {
  const { logger, unavailable } = ports;
  let search: ReturnType<typeof createWebSearchProvider>;
  try {
    search = createWebSearchProvider(config.web.search, { configKey: "web.search" });
  } catch (err) {
    unavailable.push({
      toolset: "web",
      missing: `web_search: ${describeError(err)}`,
      fix: "correct web.search in config.yaml",
    });
    logger.warn({ error: describeError(err) }, "web search is off");
  }
  if (!search)
    unavailable.push({
      toolset: "web",
      missing: "web_search: no search provider configured",
      fix: "set HERALD_WEB_SEARCH_PROVIDER=searxng and HERALD_WEB_SEARCH_URL=<your SearXNG> (or brave / tavily with HERALD_WEB_SEARCH_KEY)",
    });
  const converter = createWorkerHtmlConverter();
  return {
    tools: webTools({ search, allowPrivate: config.web.allowPrivate, convertHtml: converter.convert }),
    close: () => converter.close(),
  };
}
