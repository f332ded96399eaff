/**
 * `send_message` (toolset "messaging"): the agent sends a message or a file to its own chat, or, in the
 * owner's conversations, to another chat (`telegram:123`, `email:x@y`, a platform's home channel).
 * Delivery goes through the gateway's durable outbox (the StateClient's `chat.send`, so it works from
 * workers on Redis), once per call: a turn run again after a crash does not send twice.
 */

export type { SendMessageToolDeps } from "./declaration.js";
export { sendMessageTool } from "./declaration.js";
export { workspaceExporter } from "./export.js";
export {
  createMessageSender,
  type MessagingConfig,
  type MessagingGateway,
  type MessagingPorts,
  SENT_MESSAGES_NAMESPACE,
} from "./gateway.js";
