/** The `dingtalk:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `dingtalk:` section of config.yaml. */
export const dingtalkSchema = platformSection({
  /** The app's Client ID (AppKey), also the robot's code. */
  clientId: z.string().min(1).optional(),
  /** The app's Client Secret (AppSecret). */
  clientSecret: z.string().min(1).optional(),
  /** The robot code when it differs from the Client ID. */
  robotCode: z.string().min(1).optional(),
  /** The OpenAPI's address. @defaultValue "https://api.dingtalk.com" */
  apiUrl: z.url().default("https://api.dingtalk.com"),
});

/** The parsed `dingtalk:` section. */
export type DingtalkSection = z.infer<typeof dingtalkSchema>;
