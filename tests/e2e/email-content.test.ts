/**
 * What the agent reads of real-shaped client mail (fixtures from Gmail, Outlook, Apple Mail, Mutt),
 * delivered into a real Dovecot and read by the adapter: only the new text of a reply.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailAdapter } from "../../adapters/email/index.js";
import type { InboundMessage } from "../../core/types.js";
import { type EmailEnv, FakeGateway, memoryKv, newAdapter, startEmailEnv } from "./email-env.js";

const FIXTURES: Record<string, { file: string; messageId: string }> = {
  gmail: { file: "gmail-reply.eml", messageId: "CAF9x2kQ7v0rT8mYp1Ld4sGfZ0oE3nHq@mail.example.test" },
  outlook: {
    file: "outlook-reply.eml",
    messageId: "AM0PR07MB4420D1A5B1C3E0F2A7C9D4E6B8A10@AM0PR07MB4420.eurprd07.prod.outlook.test",
  },
  outlookOriginal: {
    file: "outlook-original-message.eml",
    messageId: "000001dbd45a$6f1e2b40$4d5a81c0$@example.test",
  },
  apple: { file: "apple-mail-signature.eml", messageId: "8E3F1B2C-5D6A-4E7F-9A0B-1C2D3E4F5A6B@example.test" },
  htmlOnly: { file: "html-only-reply.eml", messageId: "html-only-7a1c@mail.example.test" },
  inline: { file: "inline-reply.eml", messageId: "inline-3c9d@example.test" },
  bottomPost: {
    file: "thunderbird-bottom-post.eml",
    messageId: "5b1d7e0c-2f4a-4c8e-9d3b-7a6e1f0c2b9d@example.test",
  },
};

let env: EmailEnv;
let adapter: EmailAdapter;
const byName = new Map<string, InboundMessage>();

beforeAll(async () => {
  env = await startEmailEnv();
  const bot = env.nextBot();
  adapter = newAdapter(env, bot, memoryKv());
  const gateway = new FakeGateway().attach(adapter);
  gateway.reply = undefined;
  await adapter.start(gateway.handler);
  for (const { file } of Object.values(FIXTURES)) {
    await env.mail(bot, readFileSync(join(import.meta.dirname, "../fixtures/email", file), "utf8"));
  }
  await gateway.waitForAccepted(Object.keys(FIXTURES).length);
  for (const [name, { messageId }] of Object.entries(FIXTURES)) {
    const m = gateway.accepted.find((a) => a.messageId === messageId);
    if (m) byName.set(name, m);
  }
});

afterAll(async () => {
  await adapter?.stop();
  await env?.close();
});

const text = (name: string) => byName.get(name)?.text;

describe("email adapter: the new text of a reply", () => {
  it("Gmail: drops the wrapped 'On … wrote:' line and the quote", () => {
    expect(text("gmail")).toBe("Thanks! Can you break that down by region?");
  });

  it("Outlook: drops the '________ From: … Sent: …' block", () => {
    expect(text("outlook")).toBe("Please send the same figures for Q2 as a table.\n\nBest regards,\nAlice");
  });

  it("Outlook: drops '-----Original Message-----' and what follows", () => {
    expect(text("outlookOriginal")).toBe("Forget the table, a chart is fine.");
  });

  it("Apple Mail: drops the signature after '-- ' and the quote below it", () => {
    expect(text("apple")).toBe("Perfect, that is all I needed — thanks.");
  });

  it("HTML-only mail: converted to text, list kept, Gmail quote container dropped", () => {
    const t = text("htmlOnly") ?? "";
    expect(t).toMatch(/^Could you also list:/);
    expect(t).toMatch(/the top customer[\s\S]*the churn rate/);
    expect(t).not.toMatch(/wrote:|Q3 sales|<\/?[a-z]/);
  });

  it("inline answers: keeps the answers, drops the quoted questions", () => {
    expect(text("inline")).toBe("Q4, the one that just ended.\n\nAll of them.");
  });

  it("bottom-posted reply (Thunderbird): keeps the answer below the quote, without the signature", () => {
    expect(text("bottomPost")).toBe("Great, and how does Q4 look so far?");
  });

  it("all replies to the same root share one thread; the sender address is lowercased and is the chat", () => {
    const threads = new Set([...byName.values()].map((m) => m.chat.threadId));
    expect(threads).toEqual(new Set(["q3-root@example.test"]));
    expect(new Set([...byName.values()].map((m) => m.chat.chatId))).toEqual(new Set(["alice@example.test"]));
  });
});
