/**
 * The gateway's mention-gating rule with default settings (require-mention on, no engaged thread), for
 * adapter tests that build an adapter without a gateway: `AdapterDeps.isAddressed` as the runner gives it.
 */
import type { InboundMessage } from "../../core/types.js";
import { isAddressed } from "../../gateway/inbound.js";

export const gatewayIsAddressed = (message: InboundMessage): boolean =>
  isAddressed(message, "", { settings: { platforms: {} }, engaged: { get: () => undefined } });
