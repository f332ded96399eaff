/**
 * The email driver of the PlatformAdapter contract: the real adapter (imapflow + nodemailer) against a
 * real Dovecot (IMAP, shared by the file's cases, one bot mailbox per case) and the in-process SMTP sink.
 * Email has no edits, deletions or typing, and no length limit (a reply is one mail). SMTP has no
 * rate-limit answer with a wait: a server that throttles defers the message with a 4xx reply.
 */
import { ALICE, type EmailEnv, memoryKv, newAdapter, startEmailEnv } from "../../e2e/email-env.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";

let env: EmailEnv | undefined;
const current = (): EmailEnv => {
  if (!env) throw new Error("the email driver's environment starts in beforeAll");
  return env;
};

export const emailDriver: PlatformDriver = {
  platform: "email",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: undefined,
  errors: {
    // 451 "try again later" (how SMTP servers throttle): retryable, no wait named, not told apart from
    // other deferrals (see smtp.ts).
    rateLimited: { code: "platform_error", retryAfterMs: undefined },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async beforeAll() {
    env = await startEmailEnv();
  },
  async afterAll() {
    await env?.close();
    env = undefined;
  },
  async setup() {
    const e = current();
    // A fresh mailbox per case: startEmailEnv has 12, and says so when a new case needs more.
    const bot = e.nextBot();
    const adapter = newAdapter(e, bot, memoryKv());
    return {
      adapter,
      chat: { platform: "email", chatId: ALICE },
      delivered: () =>
        e.smtp.messages
          .filter((m) => m.envelope.from === bot.address)
          .map((m) => ({ id: m.parsed.messageId?.replace(/^<|>$/g, ""), text: m.parsed.text ?? "" })),
      rateLimitNextSend: () => e.smtp.failNext(451),
      refuseAuthOnNextSend: () => e.smtp.refuseNextLogin(),
      unknownChat: () => {
        // The recipient's server refuses an unknown mailbox (550 5.1.1) during the SMTP transaction.
        e.smtp.failNext(550);
        return { platform: "email", chatId: "nobody@example.test" };
      },
      close: () => adapter.stop(),
    };
  },
};
