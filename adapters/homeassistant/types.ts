/**
 * The Home Assistant adapter's config, the conversation request it accepts (validated with zod), and
 * the member of `AdapterServices` it reads: Home Assistant's REST API (the `ha` toolset's address and
 * token), for the messages Herald starts.
 */
import { z } from "zod";

/** Home Assistant's REST API: where notifications go. */
export interface HomeAssistantApi {
  /** `http(s)://host:port`, no trailing slash. */
  url: string;
  /** A long-lived access token. Never logged. */
  token: string;
}

declare module "../../core/types.js" {
  interface AdapterServices {
    /** Home Assistant's REST API (from `ha.url` and `ha.token`), when configured. */
    homeAssistantApi?: HomeAssistantApi | undefined;
  }
}

/** What `createHomeassistantAdapter` takes. */
export interface HomeassistantAdapterConfig {
  /** The shared secret of the conversation webhook. Never logged. */
  webhookSecret: string;
  /** How long a request waits for its reply. @defaultValue 25000 */
  replyTimeoutMs?: number | undefined;
  /** Where messages Herald starts go. @defaultValue a persistent notification */
  notifyService?: string | undefined;
  /** The REST API for those messages; unset, only replies to Home Assistant's requests are possible. */
  api?: HomeAssistantApi | undefined;
}

const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

/**
 * A conversation request: Herald's own shape (`text`, from a `rest_command`) or the Webhook
 * Conversation integration's (`query`, `messages`, `exposed_entities`); unknown fields are ignored.
 */
export const conversationRequestSchema = z
  .looseObject({
    text: optionalText,
    query: optionalText,
    conversation_id: optionalText,
    language: optionalText,
    device_id: optionalText,
    user_id: optionalText,
    agent_id: optionalText,
  })
  .refine((b) => (b.text ?? b.query ?? "").trim().length > 0, {
    message: "a non-empty 'text' (or 'query') is required",
    path: ["text"],
  });

/** A parsed conversation request. */
export type ConversationRequest = z.infer<typeof conversationRequestSchema>;
