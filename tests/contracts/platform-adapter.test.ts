/**
 * Runs the PlatformAdapter contract against every platform's real adapter, each pointed at its fake
 * server (email: a real Dovecot and an in-process SMTP server; WhatsApp: Baileys' socket boundary).
 */
import { platformAdapterContract } from "./platform-adapter.contract.js";
import { bluebubblesDriver } from "./platform-drivers/bluebubbles.js";
import { dingtalkDriver } from "./platform-drivers/dingtalk.js";
import { discordDriver } from "./platform-drivers/discord.js";
import { emailDriver } from "./platform-drivers/email.js";
import { feishuDriver } from "./platform-drivers/feishu.js";
import { googlechatDriver } from "./platform-drivers/googlechat.js";
import { homeassistantDriver } from "./platform-drivers/homeassistant.js";
import { ircDriver } from "./platform-drivers/irc.js";
import { lineDriver } from "./platform-drivers/line.js";
import { matrixDriver } from "./platform-drivers/matrix.js";
import { mattermostDriver } from "./platform-drivers/mattermost.js";
import { signalDriver } from "./platform-drivers/signal.js";
import { slackDriver } from "./platform-drivers/slack.js";
import { smsDriver } from "./platform-drivers/sms.js";
import { teamsDriver } from "./platform-drivers/teams.js";
import { telegramDriver } from "./platform-drivers/telegram.js";
import { wecomDriver } from "./platform-drivers/wecom.js";
import { whatsappDriver } from "./platform-drivers/whatsapp.js";

for (const driver of [
  telegramDriver,
  discordDriver,
  slackDriver,
  matrixDriver,
  emailDriver,
  whatsappDriver,
  signalDriver,
  ircDriver,
  mattermostDriver,
  homeassistantDriver,
  lineDriver,
  smsDriver,
  bluebubblesDriver,
  feishuDriver,
  wecomDriver,
  dingtalkDriver,
  teamsDriver,
  googlechatDriver,
]) {
  platformAdapterContract(driver);
}
