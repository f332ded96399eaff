/** The `slack:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `slack:` section of config.yaml. */
export const slackSchema = platformSection({
  botToken: z.string().min(1).optional(),
  appToken: z.string().min(1).optional(),
  signingSecret: z.string().min(1).optional(),
  apiUrl: z.url().default("https://slack.com/api/"),
  stream: streamSetting,
});

/** The parsed `slack:` section. */
export type SlackSection = z.infer<typeof slackSchema>;
