/**
 * SOUL.md, personalities and AGENTS.md through the whole gateway: what reaches the model's system
 * prompt, that it stays the same for the session's turns (the snapshot), and that /personality switches
 * it from the next request on. Over the API server and the Telegram fake.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceManager } from "../../agent/exec/workspaces.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { chat, type Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

const systemOf = (request: FakeLlmRequest | undefined) =>
  messageText(request?.messages.find((m) => m.role === "system"));

function writeHome(h: Harness, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(h.homeDir, path, ".."), { recursive: true });
    writeFileSync(join(h.homeDir, path), text);
  }
}

function apiChat(h: Harness) {
  let sessionId: string | undefined;
  return async (text: string) => {
    const reply = await chat(h, text, { sessionId });
    expect(reply.status).toBe(200);
    sessionId ??= reply.sessionId ?? undefined;
    return reply.text;
  };
}

describe("personality and context files", () => {
  it("SOUL.md replaces the built-in persona; a change applies from the next session", async () => {
    const h = await running.startHarness();
    writeHome(h, { "SOUL.md": "You are Quill, a terse archivist who loves footnotes." });
    const say = apiChat(h);
    await say("hello");
    expect(systemOf(h.llm.requests[0])).toMatch(/^You are Quill, a terse archivist who loves footnotes\./);
    expect(systemOf(h.llm.requests[0])).not.toContain("You are Herald");

    // Edited mid-session: this session keeps its snapshot (a stable prefix); /new picks the change up.
    writeHome(h, { "SOUL.md": "You are Quill the Second." });
    await say("again");
    expect(systemOf(h.llm.requests[1])).toBe(systemOf(h.llm.requests[0]));
    await say("/new");
    await say("and now?");
    expect(systemOf(h.llm.requests[2])).toMatch(/^You are Quill the Second\./);
  });

  it("/personality lists the files and switches this chat's identity in the next request", async () => {
    const h = await running.startHarness();
    writeHome(h, {
      "SOUL.md": "You are Quill, a terse archivist.",
      "personalities/pirate.md": "You are a pirate. Say arr.",
      "personalities/Teacher.md": "You are a patient teacher.",
    });
    const say = apiChat(h);
    await say("hello");
    expect(await say("/personality")).toContain("Personalities: **default** (current), pirate, teacher.");
    expect(await say("/personality pirate")).toBe("🎭 Personality: pirate, from your next message on.");
    await say("who are you?");
    expect(systemOf(h.llm.requests.at(-1))).toMatch(/^You are a pirate\. Say arr\./);
    expect(systemOf(h.llm.requests.at(-1))).not.toContain("Quill");
    // The history of the session is kept across the switch.
    expect(h.llm.requests.at(-1)?.messages.some((m) => messageText(m) === "hello")).toBe(true);
    expect(await say("/personality ninja")).toMatch(
      /^There is no personality “ninja”\. Choose one of: default, pirate, teacher/,
    );
    expect(await say("/personality default")).toBe("🎭 Personality: default, from your next message on.");
    await say("and now?");
    expect(systemOf(h.llm.requests.at(-1))).toMatch(/^You are Quill, a terse archivist\./);
  });

  it("a chat's personality and its session's snapshot survive a restart", async () => {
    const h = await running.startHarness();
    writeHome(h, { "SOUL.md": "You are Quill.", "personalities/pirate.md": "You are a pirate." });
    const say = apiChat(h);
    await say("/personality pirate");
    await say("hi");
    await h.restart();
    await say("still a pirate?");
    expect(systemOf(h.llm.requests[1])).toBe(systemOf(h.llm.requests[0]));
    expect(systemOf(h.llm.requests[1])).toMatch(/^You are a pirate\./);
  });

  it("a chat's personality is its own: another API session keeps SOUL.md", async () => {
    const h = await running.startHarness();
    writeHome(h, { "SOUL.md": "You are Quill.", "personalities/pirate.md": "You are a pirate." });
    const first = apiChat(h);
    const second = apiChat(h);
    await first("/personality pirate");
    await first("hi");
    await second("hi");
    expect(systemOf(h.llm.requests[0])).toMatch(/^You are a pirate\./);
    expect(systemOf(h.llm.requests[1])).toMatch(/^You are Quill\./);
  });

  it("AGENTS.md in the session's workspace reaches the prompt as project context", async () => {
    const { fake, h } = await startTelegramGateway(running, { HERALD_EXEC_BACKEND: "local" });
    const workspaces = new WorkspaceManager({ rootDir: join(h.homeDir, "workspaces") });
    const { dir } = workspaces.workspaceFor({ sessionKey: "telegram:dm:111" });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "AGENTS.md"), "This project builds with `make all`; tests live in t/.");
    fake.userSends({ chatId: 111, fromId: 111, text: "how do I build?" });
    expect(await botReplies(fake, 111, 1)).toEqual(["echo: how do I build?"]);
    const system = systemOf(h.llm.requests[0]);
    expect(system).toContain("## Project context (AGENTS.md in your workspace)");
    expect(system).toContain("This project builds with `make all`; tests live in t/.");
    // Another chat's workspace has none.
    fake.userSends({ chatId: 222, fromId: 222, text: "hi" });
    await botReplies(fake, 222, 1);
    expect(systemOf(h.llm.requests[1])).not.toContain("AGENTS.md");
  });

  it("/personality on Telegram switches the identity of the next request", async () => {
    const { fake, h } = await startTelegramGateway(running);
    writeHome(h, { "personalities/pirate.md": "You are a pirate." });
    const command = { entities: [{ type: "bot_command", offset: 0, length: 12 }] };
    fake.userSends({ chatId: 111, fromId: 111, text: "/personality pirate", extra: command });
    expect(await botReplies(fake, 111, 1)).toEqual(["🎭 Personality: pirate, from your next message on."]);
    fake.userSends({ chatId: 111, fromId: 111, text: "ahoy" });
    await botReplies(fake, 111, 2);
    expect(systemOf(h.llm.requests[0])).toMatch(/^You are a pirate\./);
  });
});
