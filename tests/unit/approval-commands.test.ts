/** `/approve` and `/deny` on a plain key-value store: who may answer, once-only approvals, lapsed requests. */
import { describe, expect, it } from "vitest";
import { ApprovalStore, approvalButtons, approvalCommands } from "../../agent/exec/approvals/index.js";
import type { CommandContext, CommandResult } from "../../core/commands.js";
import type { InboundMessage, KeyValueStore } from "../../core/types.js";

function kv(): KeyValueStore {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

const KEY = "telegram:group:-100";
let clock = 1_000;
const now = () => clock;

function setup() {
  const store = new ApprovalStore(kv(), 60_000, now);
  store.request({
    sessionKey: KEY,
    sessionId: "s1",
    chat: { platform: "telegram", chatId: "-100" },
    userId: "alice",
    command: "sudo reboot",
    ruleId: "privilege-escalation",
    ruleDescription: "runs as another user",
  });
  const commands = approvalCommands(store, now).commands!;
  const run = (name: string, sender: string, args = ""): CommandResult | undefined => {
    const message = { sender: { id: sender }, chatType: "group" } as InboundMessage;
    const ctx: CommandContext = { message, args, sessionKey: KEY, now: clock };
    return commands[name]!.run(ctx);
  };
  return { store, run };
}

describe("approval commands", () => {
  it.each([
    ["approve", "bob"],
    ["deny", "bob"],
  ])("/%s from someone else in a group is refused and keeps the request", (name, sender) => {
    const { store, run } = setup();
    expect(run(name, sender)).toBe("Only the person who asked can answer this request.");
    expect(store.pending(KEY)?.command).toBe("sudo reboot");
  });

  it("/approve resumes the held call: the turn carries it and its step, and it may then run once", () => {
    const { store, run } = setup();
    const call = { id: "c1", type: "function" as const, function: { name: "terminal", arguments: "{}" } };
    const step = [{ role: "assistant" as const, content: null, tool_calls: [call] }];
    store.request({ ...store.pending(KEY)!, call, step });
    const id = store.pending(KEY)!.id;
    expect(run("approve", "alice")).toEqual({
      turnInput: "[the user approved: sudo reboot]",
      resume: { approvalId: id, answer: "approved", by: "the user", call, step },
    });
    expect(store.check(KEY, "sudo reboot", ["privilege-escalation"])).toBe(true);
    expect(store.check(KEY, "sudo reboot", ["privilege-escalation"])).toBe(false);
    expect(store.check(KEY, "sudo halt", ["privilege-escalation"])).toBe(false);
  });

  it("/approve always grants the rule for the session", () => {
    const { store, run } = setup();
    run("approve", "alice", "always");
    expect(store.check(KEY, "sudo ls", ["privilege-escalation"])).toBe(true);
    expect(store.check(KEY, "sudo ls", ["privilege-escalation"])).toBe(true);
    expect(store.check(KEY, "rm -rf /", ["recursive-delete-outside-workspace"])).toBe(false);
  });

  it("/deny resumes the held call as denied, and nothing may run", () => {
    const { store, run } = setup();
    const call = { id: "c1", type: "function" as const, function: { name: "terminal", arguments: "{}" } };
    store.request({ ...store.pending(KEY)!, call });
    expect(run("deny", "alice")).toMatchObject({ resume: { answer: "denied", call } });
    expect(store.check(KEY, "sudo reboot", ["privilege-escalation"])).toBe(false);
  });

  it("a request of an older release (no held call) is answered in words", () => {
    const { run } = setup();
    expect(run("approve", "alice")).toEqual({ turnInput: expect.stringContaining("sudo reboot") });
  });

  it("a lapsed request cannot be approved", () => {
    const { store, run } = setup();
    clock += 60_001;
    expect(run("approve", "alice")).toMatch(/lapsed; nothing was run/);
    expect(store.pending(KEY)).toBeUndefined();
    expect(store.check(KEY, "sudo reboot", ["privilege-escalation"])).toBe(false);
  });

  it("a button's answer names its request: an old prompt's click never answers a newer request", () => {
    const { store, run } = setup();
    const old = approvalButtons(store.pending(KEY)!.id)[0]!;
    store.request({ ...store.pending(KEY)!, command: "sudo halt" });
    const [approve] = approvalButtons(store.pending(KEY)!.id)[0]!;
    const args = (data: string) => data.split(" ").slice(1).join(" ");
    expect(run("approve", "alice", args(old[0]!.data))).toBe(
      "That request is no longer waiting; answer the latest one.",
    );
    expect(store.pending(KEY)?.command).toBe("sudo halt");
    expect(run("approve", "alice", args(old[1]!.data))).toMatch(/no longer waiting/);
    expect(run("approve", "alice", args(approve!.data))).toMatchObject({
      turnInput: expect.stringContaining("sudo halt"),
    });
  });

  it("the Always button grants the rule for the session", () => {
    const { store, run } = setup();
    const [, always] = approvalButtons(store.pending(KEY)!.id)[0]!;
    run("approve", "alice", always!.data.replace("/approve ", ""));
    expect(store.check(KEY, "sudo anything-else", ["privilege-escalation"])).toBe(true);
  });

  it("a click on someone else's prompt from another session is refused as such", () => {
    const { store } = setup();
    const [approve] = approvalButtons(store.pending(KEY)!.id)[0]!;
    const commands = approvalCommands(store, now).commands!;
    const message = { sender: { id: "bob" }, chatType: "group" } as InboundMessage;
    const args = approve!.data.replace("/approve ", "");
    const ctx: CommandContext = { message, args, sessionKey: `${KEY}:bob`, now: clock };
    expect(commands["approve"]!.run(ctx)).toBe("Only the person who asked can answer this request.");
    expect(commands["approve"]!.run({ ...ctx, args: "" })).toBe("Nothing is waiting for your approval.");
    expect(store.pending(KEY)?.command).toBe("sudo reboot");
  });
});
