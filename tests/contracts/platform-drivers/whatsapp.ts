/**
 * The WhatsApp driver of the PlatformAdapter contract: the real adapter at Baileys' socket boundary, with
 * the fake socket (Baileys' own event buffer; every send recorded). WhatsApp has no edits or deletions
 * here (a deleted message leaves a visible tombstone; the adapter shows "composing…" instead).
 */
import { WHATSAPP_MAX_CHARS } from "../../../adapters/whatsapp/format.js";
import { whatsAppEnv } from "../../e2e/whatsapp-env.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";

const JID = "15551234567@s.whatsapp.net";

export const whatsappDriver: PlatformDriver = {
  platform: "whatsapp",
  abilities: { edit: false, deleteMessage: false, sendTyping: true, status: true },
  maxChars: WHATSAPP_MAX_CHARS,
  errors: {
    // WhatsApp names no wait: the adapter asks for 30 s (see socket.ts `sendError`).
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 30_000 },
    // A logged-out device: the connection ends for good and sends fail as not connected (platform_error;
    // only start() reports platform_auth_failed).
    authFailed: { code: "platform_error" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const env = await whatsAppEnv({ options: { sendWaitMs: 2000 } });
    return {
      adapter: env.adapter,
      chat: { platform: "whatsapp", chatId: JID },
      ready: () =>
        env.fake
          .waitFor(() => env.adapter.status().state === "running", "the connection to open")
          .then(() => undefined),
      delivered: () =>
        env.fake
          .sent()
          .filter((s) => s.jid === JID)
          .flatMap((s) => ("text" in s.content ? [{ id: s.id, text: s.content.text }] : [])),
      rateLimitNextSend: () => {
        env.fake.failSends = { count: 1, statusCode: 429, message: "rate-overlimit" };
      },
      async refuseAuthOnNextSend() {
        // WhatsApp logs the linked device out by closing the connection with 401.
        await env.fake.current.drop(401);
        await env.fake.waitFor(() => env.adapter.status().state === "failed", "the logged-out close");
      },
      unknownChat: () => {
        env.fake.failSends = { count: 1, statusCode: 404, message: "item-not-found" };
        return { platform: "whatsapp", chatId: "15550009999@s.whatsapp.net" };
      },
      close: () => env.close(),
    };
  },
};
