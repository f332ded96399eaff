/** The `discord:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `discord:` section of config.yaml. */
export const discordSchema = platformSection({
  botToken: z.string().min(1).optional(),
  apiUrl: z.url().default("https://discord.com/api"),
  autoThread: z.boolean().default(false),
  allowBots: z.boolean().default(false),
  stream: streamSetting,
});

/** The parsed `discord:` section. */
export type DiscordSection = z.infer<typeof discordSchema>;
