/** Inbound webhooks: config, verification, prompt templates, the HTTP route and the turns they start. */
export { resolveWebhooks } from "./config.js";
export {
  createWebhooks,
  type WebhooksConfig,
  type WebhooksGateway,
  type WebhooksPorts,
  webhookTurnId,
} from "./gateway.js";
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
