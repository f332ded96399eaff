/**
 * The gateway's start order through the fake Bot API: Telegram polls before the agent side (tools,
 * the sandbox's check, plugins) has loaded; a message that arrives meanwhile waits for it, unconfirmed,
 * and is then answered once, by the plugin command it names; the command menu goes out once the
 * plugins' commands are in it.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The sample notes plugin, whose module finishes loading only once `gate` exists. */
function gatedPlugin(): { dir: string; gate: string } {
  const root = mkdtempSync(join(tmpdir(), "herald-start-order-"));
  temps.push(root);
  const dir = join(root, "plugins");
  mkdirSync(dir);
  cpSync(join(import.meta.dirname, "../../examples/plugins/notes"), join(dir, "notes"), { recursive: true });
  const gate = join(root, "gate");
  const main = join(dir, "notes/index.js");
  const wait = `import { existsSync as gateExists } from "node:fs";\nwhile (!gateExists(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20));\n`;
  writeFileSync(main, wait + readFileSync(main, "utf8"));
  return { dir, gate };
}

const commandsSent = (fake: FakeTelegram): string[] => {
  const raw = fake.callsTo("setMyCommands")[0]?.params["commands"];
  const list = (typeof raw === "string" ? JSON.parse(raw) : (raw ?? [])) as { command: string }[];
  return list.map((c) => c.command);
};

describe("telegram: the gateway's start order", () => {
  it("polls before the plugins load; a command sent meanwhile is answered once, by the plugin", async () => {
    const { dir, gate } = gatedPlugin();
    // The fake is made up front so the test can watch it while the gateway is still starting.
    const starting = startTelegramGateway(running, { HERALD_PLUGINS_DIR: dir });
    await vi.waitFor(() => expect(running.fake?.callsTo("getUpdates").length).toBeGreaterThan(0), {
      timeout: 20_000,
    });
    const fake = running.fake!;
    const polls = fake.callsTo("getUpdates").length;
    fake.userSends({ chatId: 111, fromId: 111, text: "/notes" });
    // The poll returns the update; it is neither answered nor confirmed (no next poll, whose offset
    // would confirm it) while the plugin is still loading.
    await new Promise((r) => setTimeout(r, 800));
    expect(fake.botMessages(111)).toHaveLength(0);
    expect(fake.callsTo("getUpdates")).toHaveLength(polls);
    expect(fake.callsTo("setMyCommands")).toHaveLength(0);

    writeFileSync(gate, "");
    await starting;
    expect(await botReplies(fake, 111, 1)).toEqual(["The notebook is empty."]);
    await vi.waitFor(() => expect(fake.callsTo("setMyCommands")).toHaveLength(1));
    // `/plugins` comes with the plugins: the menu went out once they had loaded.
    expect(commandsSent(fake)).toContain("plugins");
    await new Promise((r) => setTimeout(r, 500));
    expect(fake.botMessages(111)).toHaveLength(1);
  });
});
