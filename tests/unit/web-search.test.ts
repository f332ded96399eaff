/**
 * The web search providers against fakes of their real HTTP APIs (tests/fakes/search): one contract
 * suite run for each provider, then what is particular to each, then `createWebSearchProvider`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BraveSearchProvider,
  createWebSearchProvider,
  SearxngSearchProvider,
  TavilySearchProvider,
  WebSearchError,
  type WebSearchProvider,
} from "../../agent/tools/web/index.js";
import { ConfigError } from "../../core/errors.js";
import { type FakeServer, startFakeBrave, startFakeSearxng, startFakeTavily } from "../fakes/search/index.js";

const BRAVE_KEY = "BSA-test-key-0001";
const TAVILY_KEY = "tvly-test-key-0001";

interface Case {
  name: string;
  start: () => Promise<FakeServer>;
  /** A provider pointed at the fake; `key` overrides the good key (for the 401 case). */
  make: (baseUrl: string, options?: { key?: string; timeoutMs?: number }) => WebSearchProvider;
  /** The wait the fake's 429 announces (Retry-After, or Brave's X-RateLimit-Reset). SearXNG's key is a proxy token. */
  retryAfterMs: number;
}

const cases: Case[] = [
  {
    name: "searxng",
    start: () => startFakeSearxng({ token: "proxy-token" }),
    make: (baseUrl, o = {}) =>
      new SearxngSearchProvider({ baseUrl, apiKey: o.key ?? "proxy-token", timeoutMs: o.timeoutMs }),
    retryAfterMs: 30_000,
  },
  {
    name: "brave",
    start: () => startFakeBrave({ key: BRAVE_KEY }),
    make: (baseUrl, o = {}) =>
      new BraveSearchProvider({ baseUrl, apiKey: o.key ?? BRAVE_KEY, timeoutMs: o.timeoutMs }),
    retryAfterMs: 1_000,
  },
  {
    name: "tavily",
    start: () => startFakeTavily({ key: TAVILY_KEY }),
    make: (baseUrl, o = {}) =>
      new TavilySearchProvider({ baseUrl, apiKey: o.key ?? TAVILY_KEY, timeoutMs: o.timeoutMs }),
    retryAfterMs: 12_000,
  },
];

async function rejection(promise: Promise<unknown>): Promise<WebSearchError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebSearchError);
  return err as WebSearchError;
}

describe.each(cases)("WebSearchProvider contract: $name", (c) => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await c.start();
  });
  afterAll(() => fake.close());

  it("returns title, url and a plain-text snippet per result, at most `limit`", async () => {
    const results = await c.make(fake.url).search("http caching", { limit: 3 });
    expect(results).toHaveLength(3);
    for (const r of results) {
      expect(r.url).toMatch(/^https:\/\//);
      expect(r.title.length).toBeGreaterThan(0);
      expect(r.snippet).toContain("http caching");
      expect(r.snippet).not.toMatch(/<|&amp;/);
    }
    expect(results[0]).toMatchObject({
      title: "HTTP | Node.js Documentation",
      url: "https://nodejs.org/api/http.html",
    });
  });

  it("answers an empty list when nothing matched", async () => {
    expect(await c.make(fake.url).search("nothing")).toEqual([]);
  });

  it("says the key was refused and names the config key to fix on 401", async () => {
    const err = await rejection(c.make(fake.url, { key: "wrong" }).search("http"));
    expect(err.code).toBe("platform_auth_failed");
    expect(err.status).toBe(401);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("web.search.apiKey");
    expect(err.message).not.toContain("wrong");
  });

  it("classifies 429 as rate-limited, retryable, with the wait the provider gave", async () => {
    const err = await rejection(c.make(fake.url).search("rate limit me"));
    expect(err.code).toBe("platform_rate_limited");
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(c.retryAfterMs);
    expect(err.message).toContain(`${c.retryAfterMs / 1000} s`);
  });

  it("classifies 5xx as retryable", async () => {
    const err = await rejection(c.make(fake.url).search("server error"));
    expect(err).toMatchObject({ code: "platform_error", status: 503, retryable: true });
  });

  it("gives up after timeoutMs with a retryable error", async () => {
    const started = Date.now();
    const err = await rejection(c.make(fake.url, { timeoutMs: 300 }).search("slow"));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({ code: "platform_error", retryable: true });
    expect(err.message).toContain("did not answer within 0.3 s");
  });

  it("stops when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = c.make(fake.url).search("slow", { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const err = await rejection(pending);
    expect(err.code).toBe("turn_cancelled");
  });

  it("says a host that does not listen could not be reached, retryably", async () => {
    const err = await rejection(c.make("http://127.0.0.1:9").search("http"));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("could not be reached");
  });
});

describe("the requests each provider sends", () => {
  it("SearXNG: GET /search?q=…&format=json; a 403 explains the json format setting", async () => {
    const fake = await startFakeSearxng();
    try {
      await new SearxngSearchProvider({ baseUrl: `${fake.url}/` }).search("node streams");
      expect(fake.requests[0]).toMatchObject({
        method: "GET",
        path: "/search",
        query: { q: "node streams", format: "json" },
      });
      expect(fake.requests[0]?.headers.authorization).toBeUndefined();
      // A real instance answers 403 to format=json when json is not in search.formats of settings.yml.
      const htmlOnly = await startFakeSearxng({ jsonDisabled: true });
      const err = await rejection(new SearxngSearchProvider({ baseUrl: htmlOnly.url }).search("x"));
      await htmlOnly.close();
      expect(err).toMatchObject({ code: "platform_auth_failed", status: 403 });
      expect(err.message).toContain('add "json" to search.formats');
    } finally {
      await fake.close();
    }
  });

  it("Brave: GET /res/v1/web/search with q, count and X-Subscription-Token; highlighting stripped", async () => {
    const fake = await startFakeBrave({ key: BRAVE_KEY });
    try {
      const results = await new BraveSearchProvider({ baseUrl: fake.url, apiKey: BRAVE_KEY }).search(
        "fetch api",
        {
          limit: 50,
        },
      );
      const request = fake.requests[0];
      expect(request).toMatchObject({
        method: "GET",
        path: "/res/v1/web/search",
        query: { q: "fetch api", count: "20" },
      });
      expect(request?.headers["x-subscription-token"]).toBe(BRAVE_KEY);
      expect(request?.headers.accept).toBe("application/json");
      expect(results[0]?.snippet).toBe(
        "The HTTP interfaces in Node.js are designed to support many features of the protocol & more on fetch api.",
      );
    } finally {
      await fake.close();
    }
  });

  it("Tavily: POST /search, JSON body with query and max_results, Authorization: Bearer", async () => {
    const fake = await startFakeTavily({ key: TAVILY_KEY });
    try {
      const results = await new TavilySearchProvider({ baseUrl: fake.url, apiKey: TAVILY_KEY }).search(
        "rfc 9110",
      );
      const request = fake.requests[0];
      expect(request).toMatchObject({ method: "POST", path: "/search" });
      expect(request?.headers.authorization).toBe(`Bearer ${TAVILY_KEY}`);
      expect(JSON.parse(request?.body ?? "{}")).toMatchObject({ query: "rfc 9110", max_results: 5 });
      expect(results).toHaveLength(5);
    } finally {
      await fake.close();
    }
  });
});

describe("createWebSearchProvider", () => {
  it("returns undefined when nothing is configured (blank values count as unset)", () => {
    expect(createWebSearchProvider(undefined)).toBeUndefined();
    expect(createWebSearchProvider(null)).toBeUndefined();
    expect(createWebSearchProvider({})).toBeUndefined();
    expect(createWebSearchProvider({ provider: "", apiKey: "" })).toBeUndefined();
  });

  it("builds each provider, and the built provider works end to end", async () => {
    const fake = await startFakeBrave({ key: BRAVE_KEY });
    try {
      const provider = createWebSearchProvider({ provider: "brave", apiKey: BRAVE_KEY, baseUrl: fake.url });
      expect(provider?.name).toBe("brave");
      expect(await provider?.search("x", { limit: 2 })).toHaveLength(2);
    } finally {
      await fake.close();
    }
    expect(createWebSearchProvider({ provider: "tavily", apiKey: TAVILY_KEY })?.name).toBe("tavily");
    expect(createWebSearchProvider({ provider: "searxng", baseUrl: "http://localhost:8080" })?.name).toBe(
      "searxng",
    );
  });

  it.each([
    [
      { provider: "bing", apiKey: "k" },
      "web.search.provider",
      /is "bing": set it to searxng, brave or tavily/,
    ],
    [{ apiKey: "k" }, "web.search.provider", /is missing: set it to searxng, brave or tavily/],
    [{ provider: "brave" }, "web.search.apiKey", /required for brave: get one at https:\/\/api-dashboard/],
    [{ provider: "tavily" }, "web.search.apiKey", /required for tavily/],
    [{ provider: "searxng" }, "web.search.baseUrl", /required for searxng.*search\.formats/],
    [{ provider: "searxng", baseUrl: "localhost:8080" }, "web.search.baseUrl", /not an http\(s\) URL/],
    [{ provider: "brave", apiKey: "k", apikey: "k" }, "web.search", /unknown key\(s\) apikey/],
  ])("refuses %j naming %s and the fix", (config, key, message) => {
    const err = (() => {
      try {
        createWebSearchProvider(config);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe(key);
    expect((err as ConfigError).message).toMatch(message);
  });

  it("names the caller's config path in messages", () => {
    expect(() => createWebSearchProvider({ provider: "brave" }, { configKey: "tools.search" })).toThrow(
      "tools.search.apiKey is required",
    );
  });
});
