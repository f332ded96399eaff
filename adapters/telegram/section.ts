/** The `telegram:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `telegram:` section of config.yaml. */
export const telegramSchema = platformSection({
  botToken: z.string().min(1).optional(),
  apiRoot: z.url().default("https://api.telegram.org"),
  webhookUrl: z.url().optional(),
  webhookSecret: z.string().min(1).optional(),
  stream: streamSetting,
});

/** The parsed `telegram:` section. */
export type TelegramSection = z.infer<typeof telegramSchema>;
