/** Inbound webhooks: config, verification, prompt templates and the HTTP route. */
export { resolveWebhooks } from "./config.js";
export { createInboundWebhookRoute, type InboundWebhookOptions } from "./route.js";
export { fillPrompt } from "./template.js";
export type {
  ResolvedWebhook,
  WebhookConfig,
  WebhookDelivery,
  WebhookNodeRoute,
  WebhookSubmit,
  WebhookSubmitOutcome,
} from "./types.js";
export { webhooksSchema } from "./types.js";
export { signatureOf, verifyDelivery } from "./verify.js";
