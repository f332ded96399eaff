/**
 * WhatsApp as a platform module: its config section, env names, reference rows, setup step and lazily
 * built adapter.
 */
import { definePlatform } from "../../core/platform.js";
import { whatsappSchema } from "./section.js";
import { whatsappSetup } from "./setup.js";

/** The WhatsApp platform (a linked device through Baileys). */
export const whatsappPlatform = definePlatform({
  name: "whatsapp",
  schema: whatsappSchema,
  singleAccount:
    "Herald is one linked device of one WhatsApp number, its pairing kept in HERALD_HOME/whatsapp; for a second number run a second Herald with its own HERALD_HOME",
  env: {
    WHATSAPP_ENABLED: ["enabled", "bool"],
    WHATSAPP_SELF_CHAT: ["self_chat", "bool"],
  },
  isConfigured: (c) => c.enabled,
  async create(c, deps) {
    const { createWhatsAppAdapter } = await import("./index.js");
    return createWhatsAppAdapter(c, deps);
  },
  normaliseUserId: (id) => id.trim().replace(/^\+/, "").replace(/@.*$/, ""),
  reference: {
    rows: [
      ["enabled", "starts the platform"],
      ["self_chat", 'answer in the account owner\'s "message yourself" chat'],
    ],
  },
  setup: whatsappSetup,
  promptHint: "You are replying in WhatsApp; only bold, italic and code render. Avoid headings and tables.",
});
