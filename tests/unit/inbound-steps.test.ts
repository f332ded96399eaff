/**
 * The inbound steps, each alone, as tables of cases: plain objects stand in for the ledger, access,
 * sessions and turns (no SQLite, no HTTP), and each case says what the step decides and what it did.
 */
import { describe, expect, it } from "vitest";
import type { CommandResult } from "../../core/commands.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnRecord } from "../../core/turn.js";
import type { InboundMessage } from "../../core/types.js";
import {
  admitInput,
  authorize,
  busyPolicy,
  command,
  createTurn,
  dedupe,
  gate,
  type InboundContext,
  type InboundDeps,
  openSession,
} from "../../gateway/inbound.js";

function message(over: Partial<InboundMessage> = {}): InboundMessage {
  return {
    platform: "telegram",
    messageId: "m1",
    chat: { platform: "telegram", chatId: "-100" },
    chatType: "group",
    sender: { id: "7", name: "Ada" },
    text: "hello",
    mentioned: false,
    ...over,
  };
}

interface Recorded {
  replies: { text: string; kind: string | undefined }[];
  cancelled: { key: string; keepInput: boolean }[];
  created: TurnRecord[];
  claimed: string[];
  appended: number;
}

/** Deps with everything a step may touch recorded; `over` replaces what a case needs. */
function deps(over: Partial<InboundDeps> = {}): { deps: InboundDeps; rec: Recorded } {
  const rec: Recorded = { replies: [], cancelled: [], created: [], claimed: [], appended: 0 };
  const base: InboundDeps = {
    settings: {
      timezone: "UTC",
      sessions: {
        reset: { mode: "none", idleMinutes: 1440, atHour: 4 },
        groupSessions: "per_user",
        busyPolicy: "interrupt",
      },
      platforms: { telegram: { allowedUsers: [], requireMention: true } },
    },
    ledger: { record: () => true },
    engaged: { get: () => undefined },
    access: { decide: () => "allowed" },
    answerLater: () => undefined,
    pairing: { issue: () => ({ code: "ABCD2345", expiresAt: 3_600_000 }) },
    commands: { resolve: () => undefined },
    sessions: {
      open: (parts) => ({
        session: {
          id: "s1",
          key: "k",
          chat: parts.chat,
          chatType: parts.chatType,
          userId: parts.userId,
          createdAt: 0,
          lastActiveAt: 0,
          messageCount: 0,
        },
      }),
      append: (_id, messages) => {
        rec.appended += messages.length;
        return [];
      },
    },
    turns: {
      get: () => undefined,
      create: (turn, now) => {
        const created = { ...turn, status: "pending" as const, attempts: 0, createdAt: now ?? 0 };
        rec.created.push(created);
        return created;
      },
    },
    speakers: { label: (_sessionId, _platform, sender) => sender.name ?? sender.id },
    reply: (_m, text, kind) => rec.replies.push({ text, kind }),
    cancel: (key, _reason, _effects, keepInput) => {
      rec.cancelled.push({ key, keepInput });
      return 0;
    },
    sessionEnded: () => undefined,
    claim: (key, _effects, create) => {
      create(false);
      rec.claimed.push(key);
    },
    turnId: (m) => `t-${m.messageId}`,
    log: silentLogger(),
    ...over,
  };
  return { deps: base, rec };
}

function ctx(m: InboundMessage, over: Partial<InboundContext> = {}): InboundContext {
  return { message: m, sessionKey: "k", now: 0, input: m.text, recorded: false, effects: [], ...over };
}

describe("dedupe", () => {
  it.each([
    ["a new message passes and is marked recorded", true, undefined, true],
    ["a message the ledger has seen is a duplicate", false, "duplicate", false],
  ])("%s", (_name, fresh, outcome, recorded) => {
    const c = ctx(message());
    expect(dedupe(c, deps({ ledger: { record: () => fresh } }).deps)).toBe(outcome);
    expect(c.recorded).toBe(recorded);
  });
});

describe("gate", () => {
  const engaged = { get: (key: string) => (key === "k" ? "1" : undefined) };
  it.each<[string, Partial<InboundMessage>, Partial<InboundDeps>, string | undefined]>([
    ["a DM always passes", { chatType: "dm" }, {}, undefined],
    ["a group message that mentions the bot passes", { mentioned: true }, {}, undefined],
    ["unaddressed group chatter is ignored", {}, {}, "ignored"],
    [
      "unaddressed chatter passes where require-mention is off",
      {},
      {
        settings: {
          timezone: "UTC",
          sessions: {
            reset: { mode: "none", idleMinutes: 1, atHour: 4 },
            groupSessions: "per_user",
            busyPolicy: "queue",
          },
          platforms: { telegram: { allowedUsers: [], requireMention: false } },
        },
      },
      undefined,
    ],
    [
      "a thread the bot answered in passes",
      { chat: { platform: "telegram", chatId: "-100", threadId: "9" } },
      { engaged },
      undefined,
    ],
    [
      "a thread the bot never answered in is ignored",
      { chat: { platform: "telegram", chatId: "-100", threadId: "9" } },
      {},
      "ignored",
    ],
    ["an engaged key outside a thread does not lift the gate", {}, { engaged }, "ignored"],
  ])("%s", (_name, m, over, outcome) => {
    expect(gate(ctx(message(m)), deps(over).deps)).toBe(outcome);
  });
});

describe("authorize", () => {
  it.each<
    [
      string,
      "allowed" | "pairing" | "denied",
      ReturnType<InboundDeps["pairing"]["issue"]>,
      string | undefined,
      number,
    ]
  >([
    ["an allowed user passes", "allowed", { code: "X", expiresAt: 1 }, undefined, 0],
    ["a stranger in a group is refused silently", "denied", { code: "X", expiresAt: 1 }, "unauthorized", 0],
    [
      "a stranger in a DM gets a pairing code",
      "pairing",
      { code: "ABCD2345", expiresAt: 3_600_000 },
      "pairing",
      1,
    ],
    [
      "a stranger asking again too soon gets nothing",
      "pairing",
      { limited: true, retryAfterMs: 5 },
      "unauthorized",
      0,
    ],
  ])("%s", (_name, decision, issued, outcome, replies) => {
    const { deps: d, rec } = deps({ access: { decide: () => decision }, pairing: { issue: () => issued } });
    expect(authorize(ctx(message({ chatType: "dm" })), d)).toBe(outcome);
    expect(rec.replies).toHaveLength(replies);
    if (replies) expect(rec.replies[0]?.text).toContain("ABCD2345");
  });
});

describe("command", () => {
  const after = () => undefined;
  it.each<[string, string, CommandResult | undefined, string | undefined, string, number, number]>([
    ["plain text is not a command", "hello", "never", undefined, "hello", 0, 0],
    ["an unknown command falls through to the model", "/nope x", undefined, undefined, "/nope x", 0, 0],
    ["a command's text is the reply", "/help", "Commands: …", "command", "/help", 1, 0],
    ["a reply with an effect", "/new", { reply: "New session", after }, "command", "/new", 1, 1],
    [
      "a command that starts a turn replaces the input",
      "/research cats",
      { turnInput: "skill: cats", after },
      undefined,
      "skill: cats",
      0,
      1,
    ],
  ])("%s", (_name, text, result, outcome, input, replies, effects) => {
    const { deps: d, rec } = deps({ commands: { resolve: () => result } });
    const c = ctx(message({ text, chatType: "dm" }));
    expect(command(c, d)).toBe(outcome);
    expect(c.input).toBe(input);
    expect(rec.replies).toHaveLength(replies);
    expect(c.effects).toHaveLength(effects);
  });
});

describe("admitInput", () => {
  it.each<[string, string, InboundMessage["attachments"], string | undefined]>([
    ["text passes", "hi", undefined, undefined],
    ["a file without text passes", " ", [{ kind: "document", path: "/x.pdf" }], undefined],
    ["nothing at all is ignored", "  ", undefined, "ignored"],
  ])("%s", (_name, text, attachments, outcome) => {
    expect(admitInput(ctx(message({ text, attachments })), deps().deps)).toBe(outcome);
  });
});

describe("openSession", () => {
  it("opens the session, and after an automatic reset tells the user once and the listeners after commit", () => {
    const { deps: d, rec } = deps();
    const base = d.sessions.open;
    d.sessions.open = (parts, policy, now) => ({
      ...base(parts, policy, now),
      autoReset: { reason: "idle", previousSessionId: "s0" },
    });
    const c = ctx(message({ chatType: "dm" }));
    expect(openSession(c, d)).toBeUndefined();
    expect(c.opened?.session.id).toBe("s1");
    expect(rec.replies.map((r) => r.kind)).toEqual(["notice"]);
    expect(c.effects).toHaveLength(1);
  });

  it.each([
    [
      "a client's earlier conversation seeds a new session",
      [{ role: "user" as const, content: "before" }],
      1,
    ],
    ["no context, nothing seeded", undefined, 0],
  ])("%s", (_name, context, appended) => {
    const { deps: d, rec } = deps();
    openSession(ctx(message({ chatType: "dm", context })), d);
    expect(rec.appended).toBe(appended);
  });
});

describe("busyPolicy", () => {
  it.each<[string, string, "interrupt" | "queue", number]>([
    ["interrupt cancels the running turn, keeping its input", "telegram", "interrupt", 1],
    ["queue leaves it running", "telegram", "queue", 0],
    ["API requests always queue", "api", "interrupt", 0],
  ])("%s", (_name, platform, policy, cancels) => {
    const { deps: d, rec } = deps();
    d.settings = { ...d.settings, sessions: { ...d.settings.sessions, busyPolicy: policy } };
    expect(busyPolicy(ctx(message({ platform })), d)).toBeUndefined();
    expect(rec.cancelled).toEqual(cancels ? [{ key: "k", keepInput: true }] : []);
  });
});

describe("createTurn", () => {
  const opened = deps().deps.sessions.open(
    { chat: { platform: "telegram", chatId: "1" }, chatType: "dm", userId: "7" },
    { mode: "none", idleMinutes: 1, atHour: 4 },
  );
  it.each<[string, string, TurnRecord | undefined, string, number]>([
    ["a chat message becomes a turn and is claimed", "telegram", undefined, "accepted", 1],
    ["a known turn id is a duplicate", "telegram", { id: "t-m1" } as TurnRecord, "duplicate", 0],
  ])("%s", (_name, platform, existing, outcome, created) => {
    const { deps: d, rec } = deps({ turns: { get: () => existing, create: deps().deps.turns.create } });
    const c = ctx(message({ platform, text: "hi" }), { opened, input: "expanded" });
    expect(createTurn(c, d)).toBe(outcome);
    expect(rec.claimed).toHaveLength(created);
  });

  it("creates the turn with the (possibly expanded) input and its source", () => {
    const { deps: d, rec } = deps();
    createTurn(ctx(message({ platform: "api" }), { opened, input: "expanded" }), d);
    expect(rec.created[0]).toMatchObject({ id: "t-m1", sessionId: "s1", input: "expanded", source: "api" });
    expect(rec.claimed).toEqual(["k"]);
  });

  const shared = {
    ...deps().deps.settings,
    sessions: { ...deps().deps.settings.sessions, groupSessions: "shared" as const },
  };
  it.each<[string, Partial<InboundMessage>, Partial<InboundContext>, typeof shared | undefined, string]>([
    ["a shared group's message carries its sender's tag", {}, {}, shared, "[Ada] expanded"],
    ["a typed tag stays the sender's text", {}, { input: "[Bob] hi" }, shared, "[Ada] [Bob] hi"],
    [
      "a replayed message (/retry) is not tagged again",
      {},
      { input: "[Bob] hi", replay: true },
      shared,
      "[Bob] hi",
    ],
    ["a per-user group's message is stored as written", {}, {}, undefined, "expanded"],
    ["a DM is stored as written in shared mode too", { chatType: "dm" }, {}, shared, "expanded"],
  ])("%s", (_name, m, over, settings, input) => {
    const { deps: d, rec } = deps(settings ? { settings } : {});
    createTurn(ctx(message(m), { opened, input: "expanded", ...over }), d);
    expect(rec.created[0]?.input).toBe(input);
  });
});
