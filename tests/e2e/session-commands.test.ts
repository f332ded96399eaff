/**
 * The session commands through the whole gateway and the scripted fake model: /retry, /undo, /compress,
 * /title, /sessions, /resume, /whoami and /help, over the API server and the Telegram fake. Each test
 * checks what the model sees on the next request, not only the command's reply.
 */
import { describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

/** The texts of the user and assistant messages of a request, in order. */
const conversation = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? [])
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => `${m.role}: ${messageText(m)}`);

/** Chats over the API, continuing one session. */
function apiChat(h: Harness) {
  let sessionId: string | undefined;
  return async (text: string) => {
    const reply = await chat(h, text, { sessionId });
    expect(reply.status).toBe(200);
    sessionId ??= reply.sessionId ?? undefined;
    return reply.text;
  };
}

const command = (text: string) => ({
  entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }],
});

describe("session commands over the API", () => {
  it("/retry makes the model answer the same last message again, without the dropped answer", async () => {
    const h = await running.startHarness();
    const say = apiChat(h);
    h.llm.script({ text: "first answer" }, { text: "second answer" });
    expect(await say("what is 6 times 7?")).toBe("first answer");
    expect(await say("/retry")).toBe("second answer");
    expect(h.llm.requests).toHaveLength(2);
    expect(conversation(h.llm.requests[1])).toEqual(["user: what is 6 times 7?"]);
    // The session now holds the question once and only the new answer.
    expect(await say("and again?")).toBe("echo: and again?");
    expect(conversation(h.llm.requests[2])).toEqual([
      "user: what is 6 times 7?",
      "assistant: second answer",
      "user: and again?",
    ]);
  });

  it("/undo drops the last exchange from the next request's history and says what it removed", async () => {
    const h = await running.startHarness();
    const say = apiChat(h);
    await say("one");
    await say("two");
    const undone = await say("/undo");
    expect(undone).toContain("“two”");
    expect(undone).toContain("1 message after it");
    expect(h.llm.requests).toHaveLength(2);
    await say("three");
    expect(conversation(h.llm.requests[2])).toEqual(["user: one", "assistant: echo: one", "user: three"]);
    expect(await say("/undo")).toContain("“three”");
    expect(await say("/undo")).toContain("“one”");
    expect(await say("/undo")).toBe("Nothing to undo.");
  });

  it("/title names the session; /sessions lists them; /resume <n> switches the history the model sees", async () => {
    const h = await running.startHarness();
    const say = apiChat(h);
    await say("my cat is called Whiskers");
    expect(await say("/title Cats")).toBe("🏷 Session titled “Cats”.");
    await say("/new");
    await say("my dog is called Rex");
    const listed = await say("/sessions");
    expect(listed).toMatch(
      /^1\. my dog is called Rex — \d{4}-\d\d-\d\d \d\d:\d\d UTC — 2 messages \(current\)$/m,
    );
    expect(listed).toMatch(/^2\. Cats — .* — 2 messages$/m);
    expect(await say("/resume 2")).toContain("Resumed session “Cats”");
    await say("what is my pet called?");
    expect(conversation(h.llm.requests.at(-1))).toEqual([
      "user: my cat is called Whiskers",
      "assistant: echo: my cat is called Whiskers",
      "user: what is my pet called?",
    ]);
    // The dog session is still there, now the older one.
    expect(await say("/sessions")).toMatch(/^2\. my dog is called Rex — .* — 2 messages$/m);
    expect(await say("/resume 1")).toBe("That is already the current session.");
    expect(await say("/resume 9")).toBe("Say which: /resume <n> with n from 1 to 2 (see /sessions).");
  });

  it("/compress summarises the history now and reports tokens before and after", async () => {
    const llm = await startFakeLlm();
    llm.setDefault((request) => {
      const last = messageText(request.messages.at(-1));
      if (last.includes("Summarise this conversation"))
        return { text: `Summary: ${[...new Set(last.match(/FACT-\d+/g))].join(" ")}` };
      return { text: "ok" };
    });
    const h = await running.startHarness({ llm });
    const say = apiChat(h);
    for (let i = 1; i <= 6; i++) await say(`Remember FACT-${i}. ${"padding ".repeat(60)}`);
    const report = await say("/compress");
    const [, before, after] = /~(\d+) → ~(\d+) tokens/.exec(report) ?? [];
    expect(report).toMatch(/^🗜 Compressing this session…\n\n🗜 Compressed \d+ messages into a summary/);
    expect(Number(before)).toBeGreaterThan(Number(after));
    await say("what do you know?");
    const next = h.llm.requests.at(-1)!;
    const history = JSON.stringify(next.messages);
    expect(history).toContain("Summary: FACT-1");
    expect(history).not.toContain("Remember FACT-1.");
    expect(history).toContain("Remember FACT-6.");
    await llm.close();
  });

  it("/compress commits nothing when /undo changed the session while the summary was written", async () => {
    const h = await running.startHarness();
    h.llm.setDefault(() => ({ text: "ok" }));
    let sessionId: string | undefined;
    for (let i = 1; i <= 6; i++) {
      const r = await chat(h, `Remember FACT-${i}. ${"padding ".repeat(60)}`, { sessionId });
      sessionId ??= r.sessionId ?? undefined;
    }
    h.llm.script({ text: "Summary: FACT-1 to FACT-4", delayMs: 800 });
    const compressing = chat(h, "/compress", { sessionId });
    await h.llm.waitForRequests(7);
    // Undoing into what is being summarised (the tail alone would not matter).
    for (const fact of [6, 5, 4])
      expect((await chat(h, "/undo", { sessionId })).text).toContain(`“Remember FACT-${fact}.`);
    expect((await compressing).text).toContain(
      "The session changed while I was summarising it, so nothing was compressed.",
    );
    await chat(h, "what do you know?", { sessionId });
    const history = JSON.stringify(h.llm.requests.at(-1)!.messages);
    expect(history).not.toContain("Summary: FACT-1");
    expect(history).toContain("Remember FACT-1.");
    expect(history).toContain("Remember FACT-3.");
    expect(history).not.toContain("Remember FACT-4.");
  });

  it("/whoami names the API caller as owner; /help hides owner-only commands from others", async () => {
    const h = await running.startHarness();
    const say = apiChat(h);
    const me = await say("/whoami");
    expect(me).toContain("Platform: api");
    expect(me).toContain("Access: owner");
    expect(me).toMatch(/Session: (none yet|[0-9a-f-]{36})/);
    h.gateway.runner.commands.register("secret", {
      description: "an owner's command",
      access: "owner",
      run: () => "the secret",
    });
    expect(await say("/help")).toContain("/secret — an owner's command");
    expect(await say("/help")).toContain("/retry — ");
  });
});

describe("session commands on Telegram", () => {
  it("walks through /title, /sessions, /resume, /undo, /retry and /whoami in a DM", async () => {
    const { fake, h } = await startTelegramGateway(running, { GATEWAY_OWNERS: "telegram:222" });
    let seen = 0;
    const send = async (text: string) => {
      fake.userSends({ chatId: 111, fromId: 111, text, extra: text.startsWith("/") ? command(text) : {} });
      seen += 1;
      return (await botReplies(fake, 111, seen)).at(-1)!;
    };
    expect(await send("hello")).toBe("echo: hello");
    expect(await send("/title Greetings")).toBe("🏷 Session titled “Greetings”.");
    expect(await send("/new")).toMatch(/New session/);
    expect(await send("bye")).toBe("echo: bye");
    expect(await send("/sessions")).toMatch(/^2\. Greetings — /m);
    expect(await send("/resume 2")).toContain("Resumed session “Greetings”");
    expect(await send("still there?")).toBe("echo: still there?");
    expect(conversation(h.llm.requests.at(-1))).toEqual([
      "user: hello",
      "assistant: echo: hello",
      "user: still there?",
    ]);
    expect(await send("/undo")).toContain("“still there?”");
    h.llm.script({ text: "hello again" });
    expect(await send("/retry")).toBe("hello again");
    expect(conversation(h.llm.requests.at(-1))).toEqual(["user: hello"]);
    const me = await send("/whoami");
    expect(me).toContain("Platform: telegram");
    expect(me).toContain("User: 111");
    expect(me).toContain("Access: allowed");
    expect(me).toContain("Chat: direct message 111");

    // An owner-only command: hidden from 111's /help and refused; listed for the owner, 222.
    h.gateway.runner.commands.register("secret", {
      description: "an owner's command",
      access: "owner",
      run: () => "the secret",
    });
    expect(await send("/help")).not.toContain("/secret");
    expect(await send("/secret")).toBe("/secret is for the owner only.");
    fake.userSends({ chatId: 222, fromId: 222, text: "/help", extra: command("/help") });
    expect((await botReplies(fake, 222, 1))[0]).toContain("/secret — an owner's command");
  });

  it("/compress shows the notice at once, then tokens before and after; the next request has the summary", async () => {
    const { fake, h } = await startTelegramGateway(running, { HERALD_BUSY_POLICY: "queue" });
    h.llm.setDefault((request) => {
      const last = messageText(request.messages.at(-1));
      if (last.includes("Summarise this conversation"))
        return { text: `Summary: ${[...new Set(last.match(/FACT-\d+/g))].join(" ")}` };
      return { text: "ok" };
    });
    // Long messages, sent together: the DM's turns queue and run one after another.
    for (let i = 1; i <= 5; i++)
      fake.userSends({ chatId: 111, fromId: 111, text: `Remember FACT-${i}. ${"padding ".repeat(60)}` });
    await botReplies(fake, 111, 5);
    await h.gateway.runner.outbox.idle();
    const before = fake.botMessages(111).length;
    fake.userSends({ chatId: 111, fromId: 111, text: "/compress", extra: command("/compress") });
    const replies = await botReplies(fake, 111, before + 2);
    expect(replies[before]).toBe("🗜 Compressing this session…");
    const [, was, now] = /~(\d+) → ~(\d+) tokens/.exec(replies[before + 1]!) ?? [];
    expect(Number(was)).toBeGreaterThan(Number(now));
    fake.userSends({ chatId: 111, fromId: 111, text: "what do you know?" });
    await botReplies(fake, 111, before + 3);
    const history = JSON.stringify(h.llm.requests.at(-1)!.messages);
    expect(history).toContain("Summary: FACT-1");
    expect(history).not.toContain("Remember FACT-1.");
  });

  it("refuses /retry and /undo while a turn runs, answering at once", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script({ text: "slow answer", delayMs: 1500 });
    fake.userSends({ chatId: 111, fromId: 111, text: "take your time" });
    await h.llm.waitForRequests(1);
    fake.userSends({ chatId: 111, fromId: 111, text: "/retry", extra: command("/retry") });
    expect(await botReplies(fake, 111, 1)).toEqual(["A turn is running; /stop it first, then try again."]);
    fake.userSends({ chatId: 111, fromId: 111, text: "/undo", extra: command("/undo") });
    expect((await botReplies(fake, 111, 2))[1]).toBe("A turn is running; /stop it first, then try again.");
    expect((await botReplies(fake, 111, 3))[2]).toBe("slow answer");
  });
});

describe("session commands without a harness of their own", () => {
  it("/compress on a short session says there is nothing to compress", async () => {
    const h = await startHarness();
    try {
      const say = apiChat(h);
      await say("hi");
      expect(await say("/compress")).toContain("Nothing to compress");
    } finally {
      await h.stop();
    }
  });
});
