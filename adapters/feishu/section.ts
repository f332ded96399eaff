/** The `feishu:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `feishu:` section of config.yaml. */
export const feishuSchema = platformSection({
  /** The app's App ID (`cli_…`, Developer Console → Credentials & Basic Info). */
  appId: z.string().min(1).optional(),
  /** The app's App Secret. */
  appSecret: z.string().min(1).optional(),
  /** Event subscription's Encrypt Key: events arrive AES-encrypted and signed with it. */
  encryptKey: z.string().min(1).optional(),
  /** Event subscription's Verification Token: every event and callback carries it. */
  verificationToken: z.string().min(1).optional(),
  /** `feishu` (open.feishu.cn, China) or `lark` (open.larksuite.com, elsewhere). @defaultValue "feishu" */
  domain: z.enum(["feishu", "lark"], { error: "must be 'feishu' or 'lark'" }).default("feishu"),
  /** The Open API's address when it is neither (a proxy, a test server); overrides `domain`. */
  apiUrl: z.url().optional(),
  /** `edit`: replies appear as they are written (a card patched in place); `off`: sent when done. */
  stream: streamSetting,
});

/** The parsed `feishu:` section. */
export type FeishuSection = z.infer<typeof feishuSchema>;

/** The Open API base of a domain. */
export const FEISHU_DOMAINS = {
  feishu: "https://open.feishu.cn",
  lark: "https://open.larksuite.com",
} as const;
