/**
 * Inbound webhooks: the `webhooks:` list of config.yaml (one route per entry, served at
 * `POST /webhooks/in/<name>`) and the contracts between the route and what runs the turns
 * (`gateway.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";

const ENV_NAME = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name such as CI_WEBHOOK_SECRET");
const HEADER_NAME = z
  .string()
  .regex(/^[A-Za-z0-9-]+$/, "a header name such as X-Signature-256")
  .transform((h) => h.toLowerCase());

/** HMAC-SHA256 over the raw body (or `<timestamp>.<body>` when a timestamp header is named). */
const hmacAuth = z.strictObject({
  type: z.literal("hmac"),
  /** The header carrying the hex digest, bare or as `sha256=<hex>`. @defaultValue x-signature-256 */
  header: HEADER_NAME.default("x-signature-256"),
  /** The environment variable (or HERALD_HOME/.env entry) holding the shared secret. */
  secretEnv: ENV_NAME,
  /** A header with the send time in Unix seconds; then it is signed too and must be within the window. */
  timestampHeader: HEADER_NAME.optional(),
  /** How far a timestamp may be from now. @defaultValue 300 (5 minutes) */
  toleranceS: z.number().int().positive().default(300),
});

/** `Authorization: Bearer <token>`. */
const bearerAuth = z.strictObject({
  type: z.literal("bearer"),
  /** The environment variable (or HERALD_HOME/.env entry) holding the token. */
  tokenEnv: ENV_NAME,
});

/** One entry of `webhooks:`. */
const webhookSchema = z.strictObject({
  /** The route's name: `POST /webhooks/in/<name>`. */
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, '-' or '_'"),
  auth: z.discriminatedUnion("type", [hmacAuth, bearerAuth]),
  /** The turn's prompt; `{{path.to.field}}` is filled from the JSON body (as quoted data). */
  prompt: z.string().min(1),
  /** Where the answer goes, as cron's targets: `telegram` (home channel), `telegram:123`, a comma list. */
  deliver: z.string().min(1),
  /**
   * A header naming each delivery uniquely (`X-GitHub-Delivery`): a second delivery with the same id is
   * refused, as one with the same body (and signed timestamp) is whatever its id.
   */
  idHeader: HEADER_NAME.optional(),
  /** Largest body accepted; larger gets 413. @defaultValue 65536 */
  maxBodyBytes: z.number().int().positive().max(10_485_760).default(65_536),
  /** Turns a route may start per minute; more get 429 (each turn costs a model call). @defaultValue 30 */
  maxPerMinute: z.number().int().positive().max(10_000).default(30),
  /** Toolsets the turn may use (the body is untrusted input). @defaultValue none */
  toolsets: z.array(z.string()).default([]),
});

/** The `webhooks:` section. */
export const webhooksSchema = z.array(webhookSchema).default([]);

/** One `webhooks:` entry as parsed. */
export type WebhookConfig = z.infer<typeof webhookSchema>;

/** A route with its secret read from the environment (set by `resolveWebhooks`; never logged). */
export type ResolvedWebhook = WebhookConfig & { secret: string };

/** What identifies one verified delivery, for the replay record. */
export interface WebhookDelivery {
  /** SHA-256 (hex) of the signed timestamp (empty without one), a dot and the raw body. */
  bodyKey: string;
  /** The route's id header (`id_header`), when it names one and the request sent it. Not signed. */
  id?: string | undefined;
}

/** What became of a verified delivery (`gateway.ts` decides). */
export type WebhookSubmitOutcome =
  | { kind: "accepted"; turnId: string }
  /** A replay or a retry: the same `bodyKey` was received before, or the same `id`. */
  | { kind: "duplicate"; by: "body" | "id" }
  | { kind: "undeliverable"; reason: string };

/**
 * Runs a verified delivery's turn. The same `bodyKey` twice answers `duplicate` whatever the id says;
 * so does the same `id` with another body (a sender's retry signed anew). Must not throw for a duplicate.
 */
export type WebhookSubmit = (
  route: ResolvedWebhook,
  delivery: WebhookDelivery,
  prompt: string,
) => WebhookSubmitOutcome;

/** A route on Node's request/response, as the gateway's HTTP server asks them. */
export interface WebhookNodeRoute {
  handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
}
