/**
 * MCP as a Telegram user meets it: the progress line names the server and tool while a call runs, the
 * answer arrives, and /reload-mcp answers at once and tells the chat when the servers are back.
 */
import { describe, expect, it, vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { startFakeTelegram } from "../fakes/telegram/index.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

async function start() {
  const fake = running.trackFake(await startFakeTelegram());
  const h = await running.startHarness({
    env: { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.url, TELEGRAM_ALLOWED_USERS: "111" },
    configYaml: `mcp_servers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
  });
  await vi.waitFor(() => expect(h.gateway.mcp?.status()[0]?.state).toBe("connected"), { timeout: 20_000 });
  return { fake, h };
}

describe("MCP on Telegram", () => {
  it("shows the MCP call in the progress line, answers, and reports a /reload-mcp", async () => {
    const { fake, h } = await start();
    h.llm.script(
      {
        toolCalls: [
          { name: "mcp_everything_trigger-long-running-operation", arguments: { duration: 1, steps: 2 } },
        ],
      },
      (req) => ({ text: `done: ${String(req.messages.at(-1)?.content ?? "")}` }),
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "run the long operation" });
    await vi.waitFor(
      async () =>
        expect((await botReplies(fake, 111, 1)).join("\n")).toContain(
          "done: Long running operation completed",
        ),
      { timeout: 15_000 },
    );
    const shown = [...fake.callsTo("sendMessage", 111), ...fake.callsTo("editMessageText", 111)].map((c) =>
      String(c.params["text"] ?? ""),
    );
    expect(shown.some((t) => t.includes("🔌 everything: trigger-long-running-operation"))).toBe(true);

    fake.userSends({ chatId: 111, fromId: 111, text: "/reload-mcp" });
    await vi.waitFor(
      async () => {
        const texts = (await botReplies(fake, 111, 2)).join("\n");
        expect(texts).toContain("Reloading MCP servers: everything.");
        expect(texts).toMatch(/MCP servers reloaded:\neverything: connected, \d+ tools \(stdio\)/);
      },
      { timeout: 20_000 },
    );
  });

  it("sends an image an MCP tool returned with the answer", async () => {
    const { fake, h } = await start();
    h.llm.script({ toolCalls: [{ name: "mcp_everything_get-tiny-image", arguments: {} }] }, (req) => ({
      text: `here: ${String(req.messages.at(-1)?.content ?? "")}`,
    }));
    fake.userSends({ chatId: 111, fromId: 111, text: "show me the logo" });
    await vi.waitFor(() => expect(fake.callsTo("sendPhoto", 111).length).toBe(1), { timeout: 15_000 });
    const texts = (await botReplies(fake, 111, 1)).join("\n");
    expect(texts).toMatch(
      /here: Here's the image you requested:\n\[image image\/png, \d+ bytes, saved to \/workspace\/mcp\/mcp-\d+-1\.png\]/,
    );
  });
});
