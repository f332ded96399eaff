/**
 * The web tools through the whole gateway: the scripted model searches a fake SearXNG (the real JSON
 * API) and opens a page of a local web server; loopback is refused unless the owner allows it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { type FakeServer, startFakeSearxng } from "../fakes/search/index.js";
import { type FakeWeb, startFakeWeb } from "../fakes/web/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let searxng: FakeServer | undefined;
let web: FakeWeb | undefined;
afterEach(async () => {
  await harness?.stop();
  await searxng?.close();
  await web?.close();
  harness = searxng = web = undefined;
});

const toolResults = (request: FakeLlmRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));

async function ask(h: Harness, text: string): Promise<void> {
  expect((await chat(h, text)).status).toBe(200);
}

describe("web tools", () => {
  it("searches through SearXNG and reads a page's article as Markdown", async () => {
    searxng = await startFakeSearxng();
    web = await startFakeWeb();
    harness = await startHarness({
      env: {
        HERALD_WEB_SEARCH_PROVIDER: "searxng",
        HERALD_WEB_SEARCH_URL: searxng.url,
        HERALD_WEB_ALLOW_PRIVATE: "true",
      },
    });
    harness.llm.script(
      { toolCalls: [{ name: "web_search", arguments: { query: "route filter outage", limit: 3 } }] },
      { toolCalls: [{ name: "web_extract", arguments: { url: `${web.url}/article` } }] },
      { text: "read it" },
    );
    await ask(harness, "what happened at the exchange?");
    const [found, page] = toolResults(harness.llm.requests.at(-1)!);
    expect(searxng.requests[0]?.query).toMatchObject({ q: "route filter outage", format: "json" });
    expect(found).toMatch(/^1\. .+\n {3}https?:\/\//);
    expect(page).toContain("# How a typo in a route filter took down an exchange");
    expect(page).toContain(`URL: ${web.url}/article`);
  });

  it("has no web_search without a provider, and refuses a loopback address by default", async () => {
    web = await startFakeWeb();
    harness = await startHarness();
    harness.llm.script(
      { toolCalls: [{ name: "web_extract", arguments: { url: `${web.url}/article` } }] },
      { text: "done" },
    );
    await ask(harness, "read the local page");
    // The call loaded the web toolset: the next request carries what it holds.
    const after = harness.llm.requests.at(-1)!;
    const names = (after.tools ?? []).map((t) => t.function.name);
    expect(names).toContain("web_extract");
    expect(names).not.toContain("web_search");
    expect(toolResults(harness.llm.requests.at(-1)!)[0]).toMatch(/^error: .*(private|loopback|refused)/i);
    expect(web.paths).toEqual([]);
  });
});
