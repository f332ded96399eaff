/**
 * `herald setup`: the wizard of `app/setup/` wired into the CLI. Interactive on a terminal (@clack/prompts);
 * `--non-interactive` answers every question from flags, falling back to the usual environment
 * variables (OPENAI_API_KEY, TELEGRAM_BOT_TOKEN, …) so scripts and containers can run it too.
 */
import type { Command } from "commander";
import { configuredPlatforms, loadConfig, resolveHome } from "../config.js";
import { printDoctor, runDoctor } from "../doctor.js";
import { createClackPrompter } from "../setup/clack-prompter.js";
import { type Answers, createFlagsPrompter } from "../setup/flags-prompter.js";
import type { PlatformName } from "../setup/platforms.js";
import { CheckFailed, SetupCancelled } from "../setup/types.js";
import { runSetup } from "../setup/wizard.js";
import { cliAction } from "./action.js";

type Flags = Record<string, string | boolean | undefined>;

/** Flag → (answer key, env fallback). */
const FLAG_ANSWERS: [flag: string, key: string, env?: string][] = [
  ["modelProvider", "model.provider"],
  ["modelUrl", "model.url", "OPENAI_BASE_URL"],
  ["modelKey", "model.key", "OPENAI_API_KEY"],
  ["model", "model.name", "HERALD_MODEL"],
  ["telegramToken", "telegram.token", "TELEGRAM_BOT_TOKEN"],
  ["telegramApiRoot", "telegram.api_root", "TELEGRAM_API_ROOT"],
  ["telegramOwner", "telegram.owner"],
  ["discordToken", "discord.token", "DISCORD_BOT_TOKEN"],
  ["discordApiUrl", "discord.api_url", "DISCORD_API_URL"],
  ["discordOwner", "discord.owner"],
  ["slackBotToken", "slack.bot_token", "SLACK_BOT_TOKEN"],
  ["slackAppToken", "slack.app_token", "SLACK_APP_TOKEN"],
  ["slackApiUrl", "slack.api_url", "SLACK_API_URL"],
  ["slackOwner", "slack.owner"],
  ["emailAddress", "email.address", "EMAIL_ADDRESS"],
  ["emailPassword", "email.password", "EMAIL_PASSWORD"],
  ["imapHost", "email.imap_host", "EMAIL_IMAP_HOST"],
  ["imapPort", "email.imap_port", "EMAIL_IMAP_PORT"],
  ["smtpHost", "email.smtp_host", "EMAIL_SMTP_HOST"],
  ["smtpPort", "email.smtp_port", "EMAIL_SMTP_PORT"],
  ["emailTls", "email.tls", "EMAIL_TLS"],
  ["emailAuthservId", "email.trusted_authserv_id", "EMAIL_TRUSTED_AUTHSERV_ID"],
  ["emailOwner", "email.owner"],
  ["matrixHomeserver", "matrix.homeserver", "MATRIX_HOMESERVER"],
  ["matrixToken", "matrix.token", "MATRIX_ACCESS_TOKEN"],
  ["matrixOwner", "matrix.owner"],
  ["whatsappOwner", "whatsapp.owner"],
  ["signalAccount", "signal.account", "SIGNAL_ACCOUNT"],
  ["signalHttpUrl", "signal.http_url", "SIGNAL_HTTP_URL"],
  ["signalOwner", "signal.owner"],
  ["ircServer", "irc.server", "IRC_SERVER"],
  ["ircPort", "irc.port", "IRC_PORT"],
  ["ircTls", "irc.tls", "IRC_TLS"],
  ["ircNick", "irc.nick", "IRC_NICK"],
  ["ircChannels", "irc.channels", "IRC_CHANNELS"],
  ["ircSaslAccount", "irc.sasl_account", "IRC_SASL_ACCOUNT"],
  ["ircSaslPassword", "irc.sasl_password", "IRC_SASL_PASSWORD"],
  ["ircOwner", "irc.owner"],
  ["mattermostUrl", "mattermost.url", "MATTERMOST_URL"],
  ["mattermostToken", "mattermost.token", "MATTERMOST_TOKEN"],
  ["mattermostOwner", "mattermost.owner"],
  ["webSearch", "web.provider", "HERALD_WEB_SEARCH_PROVIDER"],
  ["webSearchUrl", "web.url", "HERALD_WEB_SEARCH_URL"],
  ["webSearchKey", "web.key", "HERALD_WEB_SEARCH_KEY"],
  ["sttUrl", "speech.url", "HERALD_STT_URL"],
  ["sttKey", "speech.key", "HERALD_STT_KEY"],
  ["sttModel", "speech.model", "HERALD_STT_MODEL"],
  ["execBackend", "exec.backend", "HERALD_EXEC_BACKEND"],
];

/** The answers of a non-interactive run: flags first, then the environment. */
export function answersFrom(flags: Flags, env: NodeJS.ProcessEnv): Answers {
  const answers: Answers = {};
  for (const [flag, key, envName] of FLAG_ANSWERS) {
    const value = flags[flag] ?? (envName ? env[envName] : undefined);
    if (value !== undefined && value !== "") answers[key] = value;
  }
  if (answers["model.url"] || answers["model.key"])
    answers["model.provider"] ??= answers["model.url"] ? "other" : "openai";
  if (answers["telegram.owner"]) answers["telegram.owner_mode"] = "enter";
  else if (flags["telegramWaitOwner"]) answers["telegram.owner_mode"] = "wait";
  const platforms: PlatformName[] = [];
  if (answers["telegram.token"]) platforms.push("telegram");
  if (answers["discord.token"]) platforms.push("discord");
  if (answers["slack.bot_token"]) platforms.push("slack");
  if (answers["email.address"]) platforms.push("email");
  if (answers["matrix.token"]) platforms.push("matrix");
  if (flags["whatsapp"]) platforms.push("whatsapp");
  if (answers["signal.account"]) platforms.push("signal");
  if (answers["irc.server"]) platforms.push("irc");
  if (answers["mattermost.url"]) platforms.push("mattermost");
  answers["platforms"] = typeof flags["platforms"] === "string" ? flags["platforms"].split(",") : platforms;
  const extras: string[] = [];
  if (answers["web.provider"]) extras.push("web");
  if (answers["speech.url"]) extras.push("speech");
  if (answers["exec.backend"]) extras.push("exec");
  answers["extras"] = extras;
  answers["write"] = true;
  return answers;
}

function configured(): PlatformName[] {
  try {
    return configuredPlatforms(loadConfig()).map((m) => m.name as PlatformName);
  } catch {
    return [];
  }
}

/** Adds `herald setup` to the program. */
export function registerSetupCommand(program: Command): void {
  const cmd = program
    .command("setup")
    .description(
      "configure the model and the platforms, each credential checked live; writes config.yaml and .env",
    )
    .option(
      "--non-interactive",
      "answer from flags and environment variables; a failed check exits 1 and writes nothing",
    )
    .option("--skip-doctor", "do not run `herald doctor` at the end")
    .option("--owner-wait <seconds>", "how long to wait for your message to the Telegram bot", "120")
    .option(
      "--platforms <list>",
      "non-interactive: the platforms to set up (default: those with a token given)",
    )
    .option("--model-provider <name>", "openai, openrouter, ollama or other")
    .option("--model-url <url>", "the OpenAI-compatible base URL (env OPENAI_BASE_URL)")
    .option("--model-key <key>", "its API key (env OPENAI_API_KEY)")
    .option("--model <name>", "the model (env HERALD_MODEL; default: the current or the first listed)")
    .option("--telegram-token <token>", "env TELEGRAM_BOT_TOKEN")
    .option("--telegram-api-root <url>", "a local Bot API server (env TELEGRAM_API_ROOT)")
    .option("--telegram-owner <id>", "your Telegram user id, added to the allowlist")
    .option("--telegram-wait-owner", "read your user id from the next message you send the bot")
    .option("--discord-token <token>", "env DISCORD_BOT_TOKEN")
    .option("--discord-api-url <url>", "env DISCORD_API_URL")
    .option("--discord-owner <id>", "your Discord user id")
    .option("--slack-bot-token <token>", "env SLACK_BOT_TOKEN")
    .option("--slack-app-token <token>", "env SLACK_APP_TOKEN")
    .option("--slack-api-url <url>", "env SLACK_API_URL")
    .option("--slack-owner <id>", "your Slack member id")
    .option("--email-address <address>", "env EMAIL_ADDRESS")
    .option("--email-password <password>", "env EMAIL_PASSWORD")
    .option("--imap-host <host>")
    .option("--imap-port <port>")
    .option("--smtp-host <host>")
    .option("--smtp-port <port>")
    .option("--email-tls <bool>", "true or false")
    .option(
      "--email-authserv-id <id>",
      "env EMAIL_TRUSTED_AUTHSERV_ID: your mail server's name in Authentication-Results, e.g. mx.google.com",
    )
    .option("--email-owner <address>", "your own address")
    .option("--matrix-homeserver <url>")
    .option("--matrix-token <token>", "env MATRIX_ACCESS_TOKEN")
    .option("--matrix-owner <id>", "your Matrix id, @you:server")
    .option("--whatsapp", "enable WhatsApp (link it with `herald whatsapp link`)")
    .option("--whatsapp-owner <phone>", "your phone number, +15551234567")
    .option("--signal-account <number>", "env SIGNAL_ACCOUNT: the bot's number in signal-cli")
    .option("--signal-http-url <url>", "env SIGNAL_HTTP_URL: signal-cli's daemon")
    .option("--signal-owner <number>", "your Signal number")
    .option("--irc-server <host>", "env IRC_SERVER")
    .option("--irc-port <port>")
    .option("--irc-tls <bool>", "true or false")
    .option("--irc-nick <nick>")
    .option("--irc-channels <list>", "comma list, e.g. #herald")
    .option("--irc-sasl-account <name>")
    .option("--irc-sasl-password <password>", "env IRC_SASL_PASSWORD")
    .option("--irc-owner <hostmask>", "nick!user@host or account:<name>")
    .option("--mattermost-url <url>", "env MATTERMOST_URL: the server's address")
    .option("--mattermost-token <token>", "env MATTERMOST_TOKEN: the bot account's access token")
    .option("--mattermost-owner <id>", "your Mattermost user id")
    .option("--web-search <provider>", "searxng, brave or tavily")
    .option("--web-search-url <url>")
    .option("--web-search-key <key>")
    .option("--stt-url <url>", "speech to text: an OpenAI-compatible /v1")
    .option("--stt-key <key>")
    .option("--stt-model <name>")
    .option("--exec-backend <name>", "sandbox, local or docker");
  cmd.action(
    cliAction(async (flags: Flags) => {
      const homeDir = resolveHome();
      const interactive = !flags["nonInteractive"];
      if (interactive && !process.stdin.isTTY) {
        throw new Error(
          "herald setup asks questions on a terminal; for scripts use `herald setup --non-interactive` with flags.",
        );
      }
      const ownerWaitMs = Number(flags["ownerWait"]) * 1000;
      if (!(ownerWaitMs > 0))
        throw new Error("--owner-wait must be a number of seconds, e.g. --owner-wait 60.");
      const prompter = interactive
        ? createClackPrompter()
        : createFlagsPrompter(answersFrom(flags, process.env));
      const clack = interactive ? await import("@clack/prompts") : undefined;
      clack?.intro("Herald setup");
      try {
        const outcome = await runSetup({ homeDir, prompter, configured: configured(), ownerWaitMs });
        if (outcome.written && !flags["skipDoctor"]) {
          prompter.say("step", "herald doctor");
          printDoctor(await runDoctor());
        }
        clack?.outro(
          outcome.written
            ? "Done. Start Herald with `herald gateway` (or `herald service install`)."
            : "Done.",
        );
      } catch (err) {
        if (err instanceof SetupCancelled) {
          clack?.cancel(err.message);
          if (!clack) process.stderr.write(`${err.message}\n`);
          process.exitCode = 130;
          return;
        }
        if (err instanceof CheckFailed) throw new Error(`${err.message}\nNothing was written.`);
        throw err;
      }
    }),
  );
}
