/**
 * The agent's fetches against the gateway's own HTTP server. With HERALD_WEB_ALLOW_PRIVATE=true and no
 * dashboard password, a chat user's `web_extract` of `http://127.0.0.1:<port>/dashboard/...` used to
 * read other sessions' transcripts: the dashboard trusts its own machine. Now every spelling of the
 * gateway's address (127.0.0.1, localhost, [::1], a name resolving to 127.0.0.1, a redirect from an
 * allowed server) is refused with a clear message, whatever allow_private says, while another private
 * server is still read. `safeFetch` (web_extract, vision) and `createGuardedFetch` (plugins) alike.
 */
import { describe, expect, it } from "vitest";
import { createGuardedFetch, extractPage, WebError } from "../../agent/tools/web/index.js";
import { botSays, startTelegramGateway } from "../e2e/telegram-helpers.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { startEchoServer } from "../fakes/web/echo.js";
import { fakeLookup } from "../fakes/web/lookup.js";
import { chat } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";

const running = platformPerTest<FakeTelegram>();
const SECRET = "swordfish-4242";
const OWN = /Herald's own HTTP server .*whatever web\.allow_private says/;

const toolResults = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));

/** A gateway whose web tools may reach private addresses, with another user's secret in a session. */
async function start() {
  const { fake, h } = await startTelegramGateway(running, { HERALD_WEB_ALLOW_PRIVATE: "true" });
  expect((await chat(h, `Remember: the launch code is ${SECRET}.`)).status).toBe(200);
  return { fake, h, port: Number(new URL(h.apiUrl).port) };
}

describe("the gateway's own listeners are out of the agent's reach", () => {
  it("web_extract refuses the dashboard and the API by 127.0.0.1, localhost, [::1] and a redirect", async () => {
    const { fake, h, port } = await start();
    const echo = await startEchoServer();
    try {
      const urls = [
        `http://127.0.0.1:${port}/dashboard/sessions?q=${SECRET}`,
        `http://localhost:${port}/dashboard/sessions?q=${SECRET}`,
        `http://[::1]:${port}/v1/models`,
        `http://0.0.0.0:${port}/dashboard/`,
        `${echo.url}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/dashboard/sessions?q=${SECRET}`)}`,
        `${echo.url}/another-private-server`,
      ];
      h.llm.script(
        { toolCalls: urls.map((url) => ({ name: "web_extract", arguments: { url } })) },
        { text: "looked around" },
      );
      fake.userSends({ chatId: 111, fromId: 111, text: "read these pages" });
      await botSays(fake, 111, "looked around");
      // The turn's second model call carries the results (a learning review may come after it).
      const results = toolResults(h.llm.requests.find((r) => toolResults(r).length > 0));
      expect(results).toHaveLength(urls.length);
      for (const result of results.slice(0, 5)) {
        expect(result).toMatch(OWN);
        expect(result).not.toContain("launch code");
      }
      expect(results[4]).toContain("at a redirect");
      // Another private server is still read: allow_private means what it says for everything else.
      expect(results[5]).toContain("another-private-server");
      expect(echo.requests.map((r) => r.path)).toEqual([
        expect.stringMatching(/^\/redirect\?to=/),
        "/another-private-server",
      ]);
    } finally {
      await echo.close();
    }
  });

  it("refuses a name that resolves to 127.0.0.1, in safeFetch and in the plugins' guarded fetch", async () => {
    const { port } = await start();
    const lookup = fakeLookup({ "intranet.example": ["127.0.0.1"], "v6.example": ["::1"] });
    for (const host of ["intranet.example", "v6.example"]) {
      const url = `http://${host}:${port}/dashboard/sessions?q=${SECRET}`;
      const err = await extractPage(url, { allowPrivate: true, lookup }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebError);
      expect((err as WebError).reason).toBe("blocked_address");
      expect((err as WebError).message).toMatch(OWN);

      const guarded = createGuardedFetch({ allowPrivate: true, lookup, hint: "plugins may not" });
      const refused = await guarded(url).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WebError);
      expect((refused as WebError).message).toMatch(OWN);
    }
  });
});
