/**
 * The platforms this build knows, one module each. Adding a platform is its folder under `adapters/`
 * plus one line here: config, env names, access, the adapter registry, chat ids and prompt hints are all
 * built from this list. Each module loads its SDK only when its adapter is created.
 */
import { bluebubblesPlatform } from "../adapters/bluebubbles/module.js";
import { dingtalkPlatform } from "../adapters/dingtalk/module.js";
import { discordPlatform } from "../adapters/discord/module.js";
import { emailPlatform } from "../adapters/email/module.js";
import { feishuPlatform } from "../adapters/feishu/module.js";
import { googlechatPlatform } from "../adapters/googlechat/module.js";
import { homeassistantPlatform } from "../adapters/homeassistant/module.js";
import { ircPlatform } from "../adapters/irc/module.js";
import { linePlatform } from "../adapters/line/module.js";
import { matrixPlatform } from "../adapters/matrix/module.js";
import { mattermostPlatform } from "../adapters/mattermost/module.js";
import { signalPlatform } from "../adapters/signal/module.js";
import { slackPlatform } from "../adapters/slack/module.js";
import { smsPlatform } from "../adapters/sms/module.js";
import { teamsPlatform } from "../adapters/teams/module.js";
import { telegramPlatform } from "../adapters/telegram/module.js";
import { webchatPlatform } from "../adapters/webchat/module.js";
import { wecomPlatform } from "../adapters/wecom/module.js";
import { whatsappPlatform } from "../adapters/whatsapp/module.js";
import { parseChat } from "../core/chat.js";
import type { ChatIdSplitter, PlatformModule } from "../core/platform.js";
import type { ChatRef } from "../core/types.js";

/** Every platform module, in the order `herald doctor` and `/health` list them. */
export const platformModules: readonly PlatformModule[] = [
  telegramPlatform,
  discordPlatform,
  slackPlatform,
  emailPlatform,
  matrixPlatform,
  whatsappPlatform,
  signalPlatform,
  ircPlatform,
  mattermostPlatform,
  linePlatform,
  smsPlatform,
  bluebubblesPlatform,
  feishuPlatform,
  wecomPlatform,
  dingtalkPlatform,
  webchatPlatform,
  homeassistantPlatform,
  teamsPlatform,
  googlechatPlatform,
];

/** Chat-id splitters of the platforms that have one, for `parseChat`. */
export const chatIdSplitters: Readonly<Record<string, ChatIdSplitter>> = Object.fromEntries(
  platformModules.flatMap((m) => (m.splitChatId ? [[m.name, m.splitChatId]] : [])),
);

/** Parses a chat string with every platform's chat-id rules. */
export const chatParser = (value: string): ChatRef | undefined => parseChat(value, chatIdSplitters);

/** How each platform's user ids compare in allowlists. */
export const userIdNormalisers: Readonly<Record<string, (id: string) => string>> = Object.fromEntries(
  platformModules.flatMap((m) => (m.normaliseUserId ? [[m.name, m.normaliseUserId]] : [])),
);

/** Each platform's prompt hint, by name. */
export const platformHints: Readonly<Record<string, string>> = Object.fromEntries(
  platformModules.map((m) => [m.name, m.promptHint]),
);
