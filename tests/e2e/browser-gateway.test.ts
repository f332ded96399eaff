/**
 * The browser toolset through the whole gateway (API server, runner, agent loop) with the scripted
 * model, real Chromium and the fixture site (allowed for its port only by HERALD_BROWSER_ALLOW_PRIVATE_HOSTS):
 * the model logs in and reads the greeting, clicks through a link chain, pages that reach for a refused
 * address (a redirect, subresources, a WebSocket) never reach its server, a screenshot reaches the
 * vision model, a form sent by POST waits for /approve when browser.approve lists submit, and /new
 * closes the session's browser (its login is gone).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeSite, startFakeSite } from "../fakes/site/index.js";
import { type EchoServer, startEchoServer } from "../fakes/web/echo.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let site: FakeSite;
let refused: EchoServer;
let harness: Harness | undefined;
let vision: FakeLlm | undefined;

beforeAll(async () => {
  refused = await startEchoServer();
  site = await startFakeSite(refused.url);
});
afterAll(async () => {
  await site?.close();
  await refused?.close();
});
afterEach(async () => {
  await harness?.stop();
  await vision?.close();
  harness = undefined;
  vision = undefined;
});

async function start(env: Record<string, string> = {}): Promise<Harness> {
  harness = await startHarness({
    env: {
      HERALD_BROWSER_ALLOW_PRIVATE_HOSTS: `127.0.0.1:${site.port}`,
      // The learning review after /new would take the scripted model's next step.
      HERALD_LEARNING_ENABLED: "false",
      ...env,
    },
  });
  return harness;
}

/** The latest tool result the model was given. */
const lastTool = (request: FakeLlmRequest) =>
  messageText(request.messages.findLast((m) => m.role === "tool"));

/** The ref of `role "name"` in the latest tool result. */
function ref(request: FakeLlmRequest, role: string, name: string): string {
  const text = lastTool(request);
  return new RegExp(`\\[(e\\d+)\\] ${role} "${name}"`).exec(text)?.[1] ?? `missing-${role}-${name}`;
}

/** The model's steps of a login: open the form, fill it in, press Sign in, then say what it read. */
function loginSteps(url: string) {
  return [
    { toolCalls: [{ name: "browser_navigate", arguments: { url: `${url}/login` } }] },
    (r: FakeLlmRequest) => ({
      toolCalls: [
        { name: "browser_type", arguments: { ref: ref(r, "textbox", "Username"), text: "alice" } },
        { name: "browser_type", arguments: { ref: ref(r, "textbox", "Password"), text: "wonderland" } },
      ],
    }),
    (r: FakeLlmRequest) => ({
      toolCalls: [{ name: "browser_click", arguments: { ref: ref(r, "button", "Sign in") } }],
    }),
  ];
}

const greeting = (r: FakeLlmRequest) => ({
  text: /Hello, \w+!/.exec(lastTool(r))?.[0] ?? `no greeting: ${lastTool(r)}`,
});

describe("browser through the gateway", () => {
  it("logs in and reads the greeting behind the form, then /new closes the browser and its login", async () => {
    const h = await start();
    h.llm.script(...loginSteps(site.url), greeting);
    const reply = await chat(h, "log in to the members' site and tell me what it says", { sessionId: "b-1" });
    expect(reply.text).toBe("Hello, alice!");
    expect(site.paths).toContain("/welcome");

    h.llm.script(
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/welcome` } }] },
      (r) => ({ text: lastTool(r).split("\n")[1] ?? "" }),
    );
    expect((await chat(h, "open the welcome page again", { sessionId: "b-1" })).text).toBe(
      `URL: ${site.url}/welcome`,
    );

    expect((await chat(h, "/new", { sessionId: "b-1" })).text).toContain("New session");
    // The new session's browser has no cookie: the site sends it to the form.
    const welcome = async () => {
      h.llm.script(
        { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/welcome` } }] },
        (r) => ({ text: lastTool(r).split("\n")[1] ?? "" }),
      );
      return (await chat(h, "and now?", { sessionId: "b-1" })).text;
    };
    expect(await welcome()).toBe(`URL: ${site.url}/login`);
  });

  it("clicks through three pages", async () => {
    const h = await start();
    const next = (r: FakeLlmRequest) => ({
      toolCalls: [{ name: "browser_click", arguments: { ref: ref(r, "link", "Next page") } }],
    });
    h.llm.script(
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/chain/1` } }] },
      next,
      next,
      (r) => ({ text: /the code is \d+/.exec(lastTool(r))?.[0] ?? "lost" }),
    );
    expect((await chat(h, "follow the chain", { sessionId: "b-2" })).text).toBe("the code is 7341");
  });

  it("a page that redirects to, loads from or opens a WebSocket to a refused address never reaches it", async () => {
    const h = await start();
    h.llm.script(
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/redirect-out` } }] },
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/subresource` } }] },
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/websocket` } }] },
      { toolCalls: [{ name: "browser_wait", arguments: { text: "socket failed", ms: 5000 } }] },
      (r) => ({ text: lastTool(r).split("\n")[0] ?? "" }),
    );
    expect((await chat(h, "open those pages", { sessionId: "b-5" })).text).toBe(
      '"socket failed" is on the page.',
    );
    const results = h.llm.requests
      .at(-1)
      ?.messages.filter((m) => m.role === "tool")
      .map((m) => messageText(m));
    expect(results?.[0]).toMatch(/^error: refused 127\.0\.0\.1:\d+: it is a loopback/);
    expect(refused.connections()).toBe(0);
    expect(refused.requests).toEqual([]);
  });

  it("shows a screenshot to the vision model and gives the model its answer", async () => {
    vision = await startFakeLlm({ apiKey: "vision-key", models: ["eye-1"] });
    vision.script({ text: "A page with a heading 'Chain 3' and one sentence." });
    const h = await start({
      HERALD_VISION_URL: vision.url,
      HERALD_VISION_KEY: "vision-key",
      HERALD_VISION_MODEL: "eye-1",
    });
    h.llm.script(
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/chain/3` } }] },
      { toolCalls: [{ name: "browser_screenshot", arguments: { question: "What is on the page?" } }] },
      (r) => ({ text: lastTool(r) }),
    );
    const reply = await chat(h, "what does it look like?", { sessionId: "b-3" });
    expect(reply.text).toContain("A page with a heading 'Chain 3'");
    expect(reply.text).toMatch(/Saved the screenshot of .* as \S+screenshots\/127\.0\.0\.1_\d+-\d+\.png/);
    const parts = vision.requests[0]?.messages[0]?.content as { type: string; image_url?: { url: string } }[];
    const image = parts.find((p) => p.type === "image_url")?.image_url?.url ?? "";
    expect(image).toMatch(/^data:image\/png;base64,/);
    // A real PNG: its signature.
    expect(
      Buffer.from(image.split(",")[1] ?? "", "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
  });

  it("holds a form sent by POST for /approve when browser.approve lists submit; a GET search goes ahead", async () => {
    const h = await start({ HERALD_BROWSER_APPROVE: "submit" });
    h.llm.script(
      { toolCalls: [{ name: "browser_navigate", arguments: { url: `${site.url}/search` } }] },
      (r) => ({
        toolCalls: [
          {
            name: "browser_type",
            arguments: { ref: ref(r, "textbox", "Query"), text: "kites", submit: true },
          },
        ],
      }),
      (r) => ({ text: /Results for \w+/.exec(lastTool(r))?.[0] ?? "no results" }),
    );
    expect((await chat(h, "search for kites", { sessionId: "b-4" })).text).toBe("Results for kites");

    const welcomes = () => site.paths.filter((p) => p === "/welcome").length;
    const before = welcomes();
    h.llm.script(...loginSteps(site.url));
    const asked = await chat(h, "log in", { sessionId: "b-4" });
    expect(asked.text).toContain("needs your approval");
    expect(asked.text).toContain(`submit the form to ${site.url}/login`);
    expect(welcomes()).toBe(before);

    h.llm.script(greeting);
    expect((await chat(h, "/approve", { sessionId: "b-4" })).text).toBe("Hello, alice!");
  });
});
