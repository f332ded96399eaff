/**
 * The `web:` settings: the search provider of `web_search`, and whether fetches may reach private
 * addresses; their env names and reference rows, the doctor's search line, and the setup question.
 */
import { z } from "zod";
import { describeError } from "../../../core/errors.js";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import type { SetupQuestions, StepContext } from "../../../core/setup.js";
import { secret } from "../../../core/setup-steps.js";
import { createWebSearchProvider } from "./search/index.js";

/** The `web` section. */
export const webSectionSchema = z
  .strictObject({
    /** `{ provider: searxng | brave | tavily, base_url, api_key }`; checked when the tools are built. */
    search: z.record(z.string(), z.unknown()).optional(),
    /**
     * Let web_extract, vision_analyze and every plugin's `ctx.fetch` reach private, loopback and
     * link-local addresses (SSRF guard off).
     */
    allowPrivate: z.boolean().default(false),
  })
  .prefault({});

/** The parsed `web` section. */
export type WebSection = z.output<typeof webSectionSchema>;

/** Web search: which provider, or how to add one (web_extract works without). */
export function checkWebSearch(section: WebSection): DoctorLine {
  try {
    const provider = createWebSearchProvider(section.search, { configKey: "web.search" });
    if (provider) return { ok: true, text: `web search: ${provider.name}` };
    return {
      ok: true,
      text: "web search: off (web_extract still reads pages)",
      fix: "set HERALD_WEB_SEARCH_PROVIDER=searxng and HERALD_WEB_SEARCH_URL=<your SearXNG>, or brave / tavily with HERALD_WEB_SEARCH_KEY",
    };
  } catch (err) {
    return { ok: false, text: `web search: ${describeError(err)}`, fix: "correct web.search in config.yaml" };
  }
}

async function webStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const provider = await p.select({
    key: "web.provider",
    message: "Search provider",
    options: [
      { value: "searxng", label: "SearXNG", hint: "self-hosted, no key" },
      { value: "brave", label: "Brave Search API", hint: "needs a key" },
      { value: "tavily", label: "Tavily", hint: "needs a key" },
      { value: "skip", label: "Skip" },
    ],
    initial: (files.get("web.search.provider") as "searxng" | "brave" | "tavily" | undefined) ?? "searxng",
  });
  if (provider === "skip") return;
  files.set("web.search.provider", provider);
  if (provider === "searxng") {
    const url = await p.text({
      key: "web.url",
      message: "SearXNG base URL",
      initial: files.get("web.search.base_url") as string | undefined,
      placeholder: "http://127.0.0.1:8888",
    });
    if (url) files.set("web.search.base_url", url);
    return;
  }
  const key = await secret(ctx, "web.key", "HERALD_WEB_SEARCH_KEY", `${provider} API key`);
  if (key.isNew && key.value) files.setEnv("HERALD_WEB_SEARCH_KEY", key.value);
}

const webSetup: SetupQuestions = {
  label: "Web search",
  hint: "SearXNG, Brave or Tavily",
  chosenBy: "web.provider",
  flags: [
    {
      flag: "--web-search <provider>",
      key: "web.provider",
      env: "HERALD_WEB_SEARCH_PROVIDER",
      help: "searxng, brave or tavily",
    },
    { flag: "--web-search-url <url>", key: "web.url", env: "HERALD_WEB_SEARCH_URL" },
    { flag: "--web-search-key <key>", key: "web.key", env: "HERALD_WEB_SEARCH_KEY" },
  ],
  step: webStep,
};

/** The web tools' settings. */
export const webSettings = defineFeature({
  key: "web",
  schema: webSectionSchema,
  env: {
    HERALD_WEB_SEARCH_PROVIDER: ["search.provider", "string"],
    HERALD_WEB_SEARCH_URL: ["search.base_url", "url"],
    HERALD_WEB_SEARCH_KEY: ["search.api_key", "string"],
    HERALD_WEB_ALLOW_PRIVATE: ["allow_private", "bool"],
  },
  reference: {
    rows: [
      ["search.provider", "`searxng`, `brave` or `tavily`", "none (no `web_search`)"],
      ["search.base_url", "required for SearXNG", "the provider's"],
      ["search.api_key", "required for Brave and Tavily", "none"],
      ["search.timeout_ms", "", "the provider's"],
      [
        "allow_private",
        "`web_extract`, `vision_analyze` and every plugin's `ctx.fetch` may reach private, loopback and link-local addresses",
      ],
    ],
  },
  doctor: (section) => [checkWebSearch(section)],
  setup: webSetup,
});
