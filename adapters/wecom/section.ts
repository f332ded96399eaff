/** The `wecom:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `wecom:` section of config.yaml. */
export const wecomSchema = platformSection({
  /** The organisation's Corp ID (`ww…`, My Company → Company Info). */
  corpId: z.string().min(1).optional(),
  /** The self-built app's AgentId. */
  agentId: z.coerce.number().int().positive().optional(),
  /** The app's Secret. */
  secret: z.string().min(1).optional(),
  /** The app's callback Token (Receive Messages → Set API Receive). */
  token: z.string().min(1).optional(),
  /** The callback EncodingAESKey: 43 characters. */
  encodingAesKey: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}$/, {
      error: "must be the 43-character EncodingAESKey from the app's API receive settings",
    })
    .optional(),
  /** The API's address. @defaultValue "https://qyapi.weixin.qq.com" */
  apiUrl: z.url().default("https://qyapi.weixin.qq.com"),
});

/** The parsed `wecom:` section. */
export type WecomSection = z.infer<typeof wecomSchema>;
