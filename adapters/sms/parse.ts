/**
 * Twilio webhook fields → `InboundMessage`s, and the carrier keywords. Pure functions. Every SMS chat is
 * a DM with one number: its chat id and sender id are the sender's number, so each number has its own
 * session. STOP/START/HELP (and their carrier synonyms) are whole-message keywords, any case.
 */
import type { InboundMessage } from "../../core/types.js";
import { inboundSchema, type SmsInbound } from "./types.js";

/** A webhook whose fields are not what Twilio sends. */
export class MalformedWebhookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedWebhookError";
  }
}

/** What a carrier keyword asks for. */
export type Keyword = "stop" | "start" | "help";

const KEYWORDS: Record<string, Keyword> = {
  STOP: "stop",
  STOPALL: "stop",
  UNSUBSCRIBE: "stop",
  CANCEL: "stop",
  END: "stop",
  QUIT: "stop",
  START: "start",
  UNSTOP: "start",
  YES: "start",
  HELP: "help",
  INFO: "help",
};

/** The keyword a message is, if its whole text is one. */
export function keywordOf(body: string): Keyword | undefined {
  return KEYWORDS[
    body
      .trim()
      .replace(/[.!]+$/, "")
      .toUpperCase()
  ];
}

/** Validates the webhook's fields. @throws MalformedWebhookError naming what is wrong. */
export function readInbound(params: Record<string, string>): SmsInbound {
  const parsed = inboundSchema.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MalformedWebhookError(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** The media of a message: URL and type of each `MediaUrl<i>`. */
export function mediaOf(inbound: SmsInbound): { url: string; mimeType: string | undefined }[] {
  const out: { url: string; mimeType: string | undefined }[] = [];
  for (let i = 0; i < Math.min(inbound.NumMedia, 10); i++) {
    const url = inbound[`MediaUrl${i}`];
    const type = inbound[`MediaContentType${i}`];
    if (typeof url === "string") out.push({ url, mimeType: typeof type === "string" ? type : undefined });
  }
  return out;
}

/** An incoming SMS or MMS as an inbound message. */
export function parseInbound(inbound: SmsInbound): InboundMessage {
  return {
    platform: "sms",
    messageId: inbound.MessageSid,
    chat: { platform: "sms", chatId: inbound.From },
    chatType: "dm",
    sender: { id: inbound.From },
    text: inbound.Body.trim(),
    mentioned: true,
    replyToId: inbound.MessageSid,
  };
}
