/**
 * Checkpoints through the whole gateway: the fake Telegram, the real adapter, runner and agent on the
 * sandbox backend, and the scripted model. A turn writes files, the next removes one with a command
 * and patches another; `/checkpoints` lists both turns, `/diff` shows both changes, `/rollback` brings
 * the removed file and the old content back. In a shared group only an owner may roll back.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botSays, startTelegramGateway } from "./telegram-helpers.js";

const ALICE = 111;
const BOB = 222;
const GROUP = -1009876543210;

const running = platformPerTest<FakeTelegram>();

/** `fromId` sends `text` in `chatId` (a command gets its entity; in the group a mention first). */
function send(fake: FakeTelegram, chatId: number, fromId: number, text: string) {
  const command = text.startsWith("/");
  // In a group a command names the bot (`/rollback@herald_bot 2`), a message mentions it.
  const body =
    chatId < 0 ? (command ? text.replace(/^(\/\w+)/, "$1@herald_bot") : `@herald_bot ${text}`) : text;
  const entity = command
    ? { type: "bot_command", offset: 0, length: body.split(" ")[0]!.length }
    : { type: "mention", offset: 0, length: 11 };
  const extra = chatId < 0 || command ? { entities: [entity] } : {};
  fake.userSends({ chatId, fromId, fromName: fromId === ALICE ? "Alice" : "Bob", text: body, extra });
}

/** Waits for a bot message in `chatId` matching `pattern` and returns it. */
async function botMatches(fake: FakeTelegram, chatId: number, pattern: RegExp): Promise<string> {
  let found = "";
  await vi.waitFor(
    () => {
      const texts = fake.botMessages(chatId).map((m) => m.text ?? "");
      found = texts.find((t) => pattern.test(t)) ?? "";
      expect(found, `no bot message matches ${pattern} in ${JSON.stringify(texts)}`).not.toBe("");
    },
    { timeout: 15_000 },
  );
  return found;
}

it("lists, diffs and rolls back a turn's rm and patch", async () => {
  const { fake, h } = await startTelegramGateway(running, { GATEWAY_OWNERS: `telegram:${ALICE}` });
  const ws = join(h.homeDir, "workspaces", workspaceDirName(`telegram:dm:${ALICE}`));
  h.llm.script(
    { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "keep me\n" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "plan.txt", content: "step one\nstep two\n" } }] },
    { text: "files written" },
    { toolCalls: [{ name: "terminal", arguments: { command: "rm notes.txt" } }] },
    { toolCalls: [{ name: "patch", arguments: { path: "plan.txt", old_string: "one", new_string: "ONE" } }] },
    { text: "cleaned up" },
  );
  send(fake, ALICE, ALICE, "write my notes\nand a plan");
  await botSays(fake, ALICE, "files written");
  send(fake, ALICE, ALICE, "clean up the workspace");
  await botSays(fake, ALICE, "cleaned up");
  expect(existsSync(join(ws, "notes.txt"))).toBe(false);
  expect(readFileSync(join(ws, "plan.txt"), "utf8")).toBe("step ONE\nstep two\n");

  send(fake, ALICE, ALICE, "/checkpoints");
  const list = await botMatches(fake, ALICE, /Checkpoints of this workspace/);
  expect(list).toMatch(/^1\. \d+ s ago — clean up the workspace$/m);
  expect(list).toMatch(/^2\. \d+ s ago — write my notes$/m);
  expect(list).not.toMatch(/^3\./m);

  send(fake, ALICE, ALICE, "/diff");
  const diff = await botMatches(fake, ALICE, /Changes since checkpoint 1/);
  expect(diff).toMatch(/notes\.txt/);
  expect(diff).toMatch(/delete mode 100644 notes\.txt/);
  expect(diff).toContain("-step one");
  expect(diff).toContain("+step ONE");

  send(fake, ALICE, ALICE, "/rollback");
  const done = await botMatches(fake, ALICE, /back at checkpoint 1/);
  expect(done).toContain("/rollback 1 undoes this");
  expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe("keep me\n");
  expect(readFileSync(join(ws, "plan.txt"), "utf8")).toBe("step one\nstep two\n");
  // Restored files belong to whoever owns the workspace (the sandbox's user for a root gateway).
  expect(statSync(join(ws, "notes.txt")).uid).toBe(statSync(ws).uid);
  // checkpoint_restore is not offered unless a toolset list names "checkpoints".
  // (neither its schema nor the lazy toolsets' list in the prompt names it).
  expect(h.llm.bodies[0]).toContain("write_file");
  expect(h.llm.bodies.join("")).not.toContain("checkpoint_restore");

  // The rollback is itself undone by the checkpoint it saved.
  send(fake, ALICE, ALICE, "/rollback 1");
  await botMatches(fake, ALICE, /back at checkpoint 1 \(\d+ s ago: before \/rollback 1\)/);
  expect(existsSync(join(ws, "notes.txt"))).toBe(false);
});

it("in a shared group a non-owner cannot diff or roll back the group's workspace", async () => {
  const { fake, h } = await startTelegramGateway(running, {
    GATEWAY_OWNERS: `telegram:${ALICE}`,
    HERALD_GROUP_SESSIONS: "shared",
    HERALD_EXEC_GROUPS: "true",
  });
  const ws = join(h.homeDir, "workspaces", workspaceDirName(`telegram:group:${GROUP}`));
  h.llm.script(
    { toolCalls: [{ name: "write_file", arguments: { path: "report.md", content: "v1\n" } }] },
    { text: "report written" },
    { toolCalls: [{ name: "write_file", arguments: { path: "report.md", content: "v2\n" } }] },
    { text: "report updated" },
  );
  send(fake, GROUP, ALICE, "write the report");
  await botSays(fake, GROUP, "report written");
  send(fake, GROUP, ALICE, "update the report");
  await botSays(fake, GROUP, "report updated");

  send(fake, GROUP, BOB, "/rollback");
  await botMatches(fake, GROUP, /Only an owner may use \/rollback on this chat's shared workspace/);
  send(fake, GROUP, BOB, "/diff 2");
  await botMatches(fake, GROUP, /Only an owner may use \/diff/);
  expect(readFileSync(join(ws, "report.md"), "utf8")).toBe("v2\n");

  send(fake, GROUP, ALICE, "/rollback");
  await botMatches(fake, GROUP, /back at checkpoint 1/);
  expect(readFileSync(join(ws, "report.md"), "utf8")).toBe("v1\n");
});

it("with the checkpoints toolset the agent undoes its own turn's changes", async () => {
  const { fake, h } = await startTelegramGateway(running, {
    HERALD_TOOLSETS: "core,files,checkpoints",
    HERALD_TOOLS_LAZY: "false",
  });
  const ws = join(h.homeDir, "workspaces", workspaceDirName(`telegram:dm:${ALICE}`));
  h.llm.script(
    { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "first\n" } }] },
    { text: "ok" },
    { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "oops\n" } }] },
    { toolCalls: [{ name: "checkpoint_restore", arguments: {} }] },
    { text: "undone" },
  );
  send(fake, ALICE, ALICE, "write a");
  await botSays(fake, ALICE, "ok");
  send(fake, ALICE, ALICE, "try something");
  await botSays(fake, ALICE, "undone");
  expect(h.llm.requests[0]?.tools?.map((t) => t.function.name)).toContain("checkpoint_restore");
  expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("first\n");
});
