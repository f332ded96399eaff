/**
 * The platform steps of `herald setup`: each credential is checked live before it is kept, and the
 * owner's own user id goes into the platform's allowlist (read from a message to the bot on Telegram).
 */
import {
  checkDiscord,
  checkEmail,
  checkIrc,
  checkMatrix,
  checkMattermost,
  checkSignal,
  checkSlack,
  checkTelegram,
  waitForTelegramOwner,
} from "./checks.js";
import { checked, type StepContext, secret, tryAgain } from "./step.js";
import { CheckFailed, type Choice } from "./types.js";

export type PlatformName =
  | "telegram"
  | "discord"
  | "slack"
  | "email"
  | "matrix"
  | "whatsapp"
  | "signal"
  | "irc"
  | "mattermost";

export const PLATFORM_CHOICES: Choice<PlatformName>[] = [
  { value: "telegram", label: "Telegram", hint: "a bot token from @BotFather" },
  { value: "discord", label: "Discord", hint: "a bot token from the Developer Portal" },
  { value: "slack", label: "Slack", hint: "bot token + app-level token (Socket Mode)" },
  { value: "email", label: "Email", hint: "IMAP + SMTP" },
  { value: "matrix", label: "Matrix", hint: "homeserver + access token" },
  { value: "whatsapp", label: "WhatsApp", hint: "linked as a device with `herald whatsapp link`" },
  { value: "signal", label: "Signal", hint: "through a signal-cli daemon you run" },
  { value: "irc", label: "IRC", hint: "server, nick, channels (SASL optional)" },
  { value: "mattermost", label: "Mattermost", hint: "server address + a bot account's access token" },
];

/** Runs the step of each chosen platform. */
export async function platformSteps(ctx: StepContext, chosen: PlatformName[]): Promise<void> {
  for (const name of chosen) {
    ctx.p.say("step", PLATFORM_CHOICES.find((c) => c.value === name)!.label);
    await STEPS[name](ctx);
  }
}

const STEPS: Record<PlatformName, (ctx: StepContext) => Promise<void>> = {
  telegram: telegramStep,
  discord: discordStep,
  slack: slackStep,
  email: emailStep,
  matrix: matrixStep,
  whatsapp: whatsappStep,
  signal: signalStep,
  irc: ircStep,
  mattermost: mattermostStep,
};

/** An advanced URL (self-hosted server, proxy): kept in config.yaml only when it is not the default. */
async function apiUrl(ctx: StepContext, key: string, path: string, fallback: string): Promise<string> {
  const current = (ctx.files.get(path) as string | undefined) ?? fallback;
  const given = await ctx.p.text({ key, message: "API URL", initial: current, advanced: true });
  return given ?? current;
}

function keepApiUrl(ctx: StepContext, path: string, url: string, fallback: string): void {
  if (url !== fallback || ctx.files.get(path) !== undefined) ctx.files.set(path, url);
}

async function addOwner(ctx: StepContext, platform: PlatformName, id: string | undefined): Promise<void> {
  const owner = id?.trim();
  if (!owner) {
    ctx.p.say(
      "info",
      `No owner added for ${platform}: unknown users get a pairing code (\`herald pairing approve <code>\`).`,
    );
    return;
  }
  ctx.files.addToList(`${platform}.allowed_users`, [owner]);
  ctx.p.say("ok", `${platform}: ${owner} is on the allowlist.`);
}

async function telegramStep(ctx: StepContext): Promise<void> {
  const fallback = "https://api.telegram.org";
  for (;;) {
    const token = await secret(ctx, "telegram.token", "TELEGRAM_BOT_TOKEN", "Bot token from @BotFather");
    if (!token.value) return ctx.p.say("warn", "Telegram skipped: no token.");
    const root = await apiUrl(ctx, "telegram.api_root", "telegram.api_root", fallback);
    const bot = await checked(
      ctx,
      "Checking the token (getMe)",
      () => checkTelegram(root, token.value!),
      (b) => `Telegram bot @${b.username}`,
    );
    if (!bot) {
      if (await tryAgain(ctx, "Telegram token")) continue;
      return;
    }
    if (token.isNew) ctx.files.setEnv("TELEGRAM_BOT_TOKEN", token.value);
    keepApiUrl(ctx, "telegram.api_root", root, fallback);
    const mode = await ctx.p.select({
      key: "telegram.owner_mode",
      message: "Your own Telegram user id goes on the allowlist. How?",
      options: [
        { value: "wait", label: `Send any message to @${bot.username} now`, hint: "read with getUpdates" },
        { value: "enter", label: "Type my numeric user id" },
        { value: "skip", label: "Skip (approve people with pairing codes)" },
      ],
      initial: "wait",
    });
    let owner: string | undefined;
    if (mode === "enter")
      owner = await ctx.p.text({ key: "telegram.owner", message: "Your numeric Telegram user id" });
    if (mode === "wait") {
      const found = await checked(
        ctx,
        `Send any message to @${bot.username} now (waiting ${Math.round(ctx.ownerWaitMs / 1000)} s)`,
        () => waitForTelegramOwner(root, token.value!, ctx.ownerWaitMs),
        (who) => (who ? `Message from ${who.name} (id ${who.id})` : "No message came"),
      );
      if (
        found &&
        (await ctx.p.confirm({ key: "telegram.owner_ok", message: `Is ${found.name} you?`, initial: true }))
      )
        owner = found.id;
      else if (!found && ctx.p.interactive)
        owner = await ctx.p.text({
          key: "telegram.owner",
          message: "Your numeric Telegram user id (empty skips)",
        });
      else if (!found)
        throw new CheckFailed(
          `No private message reached @${bot.username} in time; give --telegram-owner <id> instead.`,
        );
    }
    return addOwner(ctx, "telegram", owner);
  }
}

async function discordStep(ctx: StepContext): Promise<void> {
  const fallback = "https://discord.com/api";
  for (;;) {
    const token = await secret(
      ctx,
      "discord.token",
      "DISCORD_BOT_TOKEN",
      "Bot token (Developer Portal → Bot)",
    );
    if (!token.value) return ctx.p.say("warn", "Discord skipped: no token.");
    const url = await apiUrl(ctx, "discord.api_url", "discord.api_url", fallback);
    const bot = await checked(
      ctx,
      "Checking the token (/users/@me)",
      () => checkDiscord(url, token.value!),
      (b) => `Discord bot ${b.username}`,
    );
    if (!bot) {
      if (await tryAgain(ctx, "Discord token")) continue;
      return;
    }
    if (token.isNew) ctx.files.setEnv("DISCORD_BOT_TOKEN", token.value);
    keepApiUrl(ctx, "discord.api_url", url, fallback);
    ctx.p.note(
      "Discord",
      "Enable the Message Content intent (Developer Portal → Bot → Privileged Gateway Intents) and invite the bot with the bot + applications.commands scopes.",
    );
    const owner = await ctx.p.text({
      key: "discord.owner",
      message:
        "Your Discord user id (Settings → Advanced → Developer Mode, then right-click yourself → Copy User ID; empty skips)",
    });
    return addOwner(ctx, "discord", owner);
  }
}

async function slackStep(ctx: StepContext): Promise<void> {
  const fallback = "https://slack.com/api/";
  for (;;) {
    const bot = await secret(ctx, "slack.bot_token", "SLACK_BOT_TOKEN", "Bot token (xoxb-…)");
    if (!bot.value) return ctx.p.say("warn", "Slack skipped: no bot token.");
    const app = await secret(
      ctx,
      "slack.app_token",
      "SLACK_APP_TOKEN",
      "App-level token for Socket Mode (xapp-…)",
    );
    const url = await apiUrl(ctx, "slack.api_url", "slack.api_url", fallback);
    const who = await checked(
      ctx,
      "Checking the token (auth.test)",
      () => checkSlack(url, bot.value!),
      (r) => `Slack: ${r.user} in ${r.team}`,
    );
    if (!who) {
      if (await tryAgain(ctx, "Slack tokens")) continue;
      return;
    }
    if (bot.isNew) ctx.files.setEnv("SLACK_BOT_TOKEN", bot.value);
    if (app.isNew && app.value) ctx.files.setEnv("SLACK_APP_TOKEN", app.value);
    if (!app.value)
      ctx.p.say(
        "warn",
        "No app token: Slack then needs SLACK_SIGNING_SECRET and a public URL for /webhooks/slack.",
      );
    keepApiUrl(ctx, "slack.api_url", url, fallback);
    const owner = await ctx.p.text({
      key: "slack.owner",
      message: "Your Slack member id (profile → ⋮ → Copy member ID; empty skips)",
    });
    return addOwner(ctx, "slack", owner);
  }
}

async function emailStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const address = await p.text({
      key: "email.address",
      message: "The assistant's email address",
      initial: files.get("email.address") as string | undefined,
    });
    if (!address) return p.say("warn", "Email skipped: no address.");
    const password = await secret(ctx, "email.password", "EMAIL_PASSWORD", "Its password (or app password)");
    const domain = address.split("@")[1] ?? "";
    const imapHost = await p.text({
      key: "email.imap_host",
      message: "IMAP host",
      initial: (files.get("email.imap_host") as string | undefined) ?? `imap.${domain}`,
    });
    const imapPort = Number(
      await p.text({
        key: "email.imap_port",
        message: "IMAP port",
        initial: String(files.get("email.imap_port") ?? 993),
      }),
    );
    const smtpHost = await p.text({
      key: "email.smtp_host",
      message: "SMTP host",
      initial: (files.get("email.smtp_host") as string | undefined) ?? `smtp.${domain}`,
    });
    const smtpPort = Number(
      await p.text({
        key: "email.smtp_port",
        message: "SMTP port",
        initial: String(files.get("email.smtp_port") ?? 587),
      }),
    );
    const tls = await p.confirm({
      key: "email.tls",
      message: "Use TLS?",
      initial: (files.get("email.tls") as boolean | undefined) ?? true,
    });
    if (!password.value || !imapHost || !smtpHost)
      return p.say("warn", "Email skipped: incomplete settings.");
    const settings = { address, password: password.value, imapHost, imapPort, smtpHost, smtpPort, tls };
    const ok = await checked(
      ctx,
      "Logging in to IMAP and verifying SMTP",
      () => checkEmail(settings).then(() => true),
      () => "IMAP login and SMTP verify passed",
    );
    if (!ok) {
      if (await tryAgain(ctx, "email settings")) continue;
      return;
    }
    files.set("email.address", address);
    files.set("email.imap_host", imapHost);
    files.set("email.imap_port", imapPort);
    files.set("email.smtp_host", smtpHost);
    files.set("email.smtp_port", smtpPort);
    files.set("email.tls", tls);
    if (password.isNew) files.setEnv("EMAIL_PASSWORD", password.value);
    await trustedAuthservStep(ctx);
    const owner = await p.text({
      key: "email.owner",
      message: "Your own email address (mail from it is answered; empty skips)",
    });
    return addOwner(ctx, "email", owner);
  }
}

/** `email.trusted_authserv_id`: whose Authentication-Results header vouches for senders. */
async function trustedAuthservStep({ p, files }: StepContext): Promise<void> {
  p.say(
    "info",
    "Herald answers a mail only when your mail server vouches for its sender (Authentication-Results: dmarc=pass, or dkim/spf=pass for the sender's domain). Name that server: the first word after 'Authentication-Results:' in the source of a mail you received, e.g. mx.google.com.",
  );
  const id = (
    await p.text({
      key: "email.trusted_authserv_id",
      message: "Your mail server's authserv-id (empty: the topmost Authentication-Results header counts)",
      initial: files.get("email.trusted_authserv_id") as string | undefined,
    })
  )?.trim();
  // The config schema's rule: one word. Empty trusts the topmost header, safe only if the server writes one into every mail.
  if (id && /^[^\s;()"\\]+$/.test(id)) files.set("email.trusted_authserv_id", id);
  else
    p.say(
      "warn",
      `${id ? `'${id}' is not an authserv-id` : "No authserv-id"}: the topmost header counts, whoever wrote it.`,
    );
}

async function matrixStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const homeserver = await p.text({
      key: "matrix.homeserver",
      message: "Homeserver URL",
      initial: (files.get("matrix.homeserver") as string | undefined) ?? "https://matrix.org",
    });
    if (!homeserver) return p.say("warn", "Matrix skipped.");
    const token = await secret(ctx, "matrix.token", "MATRIX_ACCESS_TOKEN", "The bot account's access token");
    if (!token.value) return p.say("warn", "Matrix skipped: no access token.");
    const who = await checked(
      ctx,
      "Checking the token (whoami)",
      () => checkMatrix(homeserver, token.value!),
      (r) => `Matrix: ${r.userId}`,
    );
    if (!who) {
      if (await tryAgain(ctx, "Matrix settings")) continue;
      return;
    }
    files.set("matrix.homeserver", homeserver);
    if (token.isNew) files.setEnv("MATRIX_ACCESS_TOKEN", token.value);
    const owner = await p.text({
      key: "matrix.owner",
      message: "Your own Matrix id, e.g. @you:matrix.org (empty skips)",
    });
    return addOwner(ctx, "matrix", owner);
  }
}

async function whatsappStep(ctx: StepContext): Promise<void> {
  ctx.files.set("whatsapp.enabled", true);
  ctx.p.note(
    "WhatsApp",
    "Herald joins your WhatsApp as a linked device. Before starting the gateway run\n  herald whatsapp link                  (scan the QR code: WhatsApp → Settings → Linked devices)\n  herald whatsapp link --phone +15551234567   (or a pairing code)",
  );
  const owner = await ctx.p.text({
    key: "whatsapp.owner",
    message: "Your own phone number in international format, e.g. +15551234567 (empty skips)",
  });
  return addOwner(ctx, "whatsapp", owner?.replace(/[^\d]/g, ""));
}

async function signalStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "Signal",
    "Herald talks to signal-cli, which holds the account:\n  signal-cli -a +4915112345678 register   (then: verify <code>)   — a number of its own, or\n  signal-cli link -n herald               — link to your phone: show the sgnl:// URI as a QR code, scan it in Signal → Settings → Linked devices\nthen run  signal-cli -a +4915112345678 daemon --http 127.0.0.1:8080  next to Herald.",
  );
  for (;;) {
    const account = await p.text({
      key: "signal.account",
      message: "The bot's Signal number, e.g. +4915112345678",
      initial: files.get("signal.account") as string | undefined,
    });
    if (!account) return p.say("warn", "Signal skipped: no number.");
    const fallback = "http://127.0.0.1:8080";
    const url =
      (await p.text({
        key: "signal.http_url",
        message: "signal-cli daemon URL",
        initial: (files.get("signal.http_url") as string | undefined) ?? fallback,
      })) ?? fallback;
    const ok = await checked(
      ctx,
      "Asking signal-cli for the account's groups (listGroups)",
      () => checkSignal(url, account),
      (r) => `Signal: ${account}, in ${r.groups} group(s)`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "Signal settings")) continue;
      return;
    }
    files.set("signal.account", account);
    if (url !== fallback) files.set("signal.http_url", url);
    const owner = await p.text({
      key: "signal.owner",
      message: "Your own Signal number, e.g. +4917… (empty skips)",
    });
    return addOwner(ctx, "signal", owner?.replace(/[^\d+]/g, ""));
  }
}

async function ircStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const server = await p.text({
      key: "irc.server",
      message: "IRC server, e.g. irc.libera.chat",
      initial: files.get("irc.server") as string | undefined,
    });
    if (!server) return p.say("warn", "IRC skipped: no server.");
    const tls = await p.confirm({
      key: "irc.tls",
      message: "Use TLS?",
      initial: (files.get("irc.tls") as boolean | undefined) ?? true,
    });
    const port = Number(
      await p.text({
        key: "irc.port",
        message: "Port",
        initial: String(files.get("irc.port") ?? (tls ? 6697 : 6667)),
      }),
    );
    const ok = await checked(
      ctx,
      `Connecting to ${server}:${port}`,
      () => checkIrc(server, port, tls).then(() => true),
      () => `IRC server ${server}:${port} answers`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "IRC server")) continue;
      return;
    }
    const nick = await p.text({
      key: "irc.nick",
      message: "The bot's nick",
      initial: (files.get("irc.nick") as string | undefined) ?? "herald",
    });
    const channels = await p.text({
      key: "irc.channels",
      message: "Channels to join, comma list (e.g. #herald)",
    });
    files.set("irc.server", server);
    files.set("irc.port", port);
    files.set("irc.tls", tls);
    if (nick) files.set("irc.nick", nick);
    if (channels)
      files.set(
        "irc.channels",
        channels
          .split(",")
          .map((c) => c.trim())
          .filter(Boolean),
      );
    const account = await p.text({
      key: "irc.sasl_account",
      message: "SASL account (services login; empty skips)",
    });
    if (account) {
      const password = await secret(ctx, "irc.sasl_password", "IRC_SASL_PASSWORD", "SASL password");
      files.set("irc.sasl_account", account);
      if (password.isNew && password.value) files.setEnv("IRC_SASL_PASSWORD", password.value);
    }
    const owner = await p.text({
      key: "irc.owner",
      message:
        "Your hostmask, nick!user@host as the server shows it (/whois yourself), or account:<name> (empty skips)",
    });
    return addOwner(ctx, "irc", owner);
  }
}

async function mattermostStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  p.note(
    "Mattermost",
    "Herald signs in as a bot account: System Console → Integrations → Bot Accounts → Enable Bot Account Creation,\nthen Integrations → Bot Accounts → Add Bot Account, and copy its access token. Add the bot to the channels it should read.",
  );
  for (;;) {
    const url = await p.text({
      key: "mattermost.url",
      message: "Mattermost address, e.g. https://chat.example.com",
      initial: files.get("mattermost.url") as string | undefined,
    });
    if (!url) return p.say("warn", "Mattermost skipped: no address.");
    const token = await secret(ctx, "mattermost.token", "MATTERMOST_TOKEN", "The bot account's access token");
    if (!token.value) return p.say("warn", "Mattermost skipped: no access token.");
    const bot = await checked(
      ctx,
      "Checking the token (users/me)",
      () => checkMattermost(url, token.value!),
      (r) => `Mattermost bot @${r.username}`,
    );
    if (!bot) {
      if (await tryAgain(ctx, "Mattermost settings")) continue;
      return;
    }
    files.set("mattermost.url", url);
    if (token.isNew) files.setEnv("MATTERMOST_TOKEN", token.value);
    const owner = await p.text({
      key: "mattermost.owner",
      message: "Your own Mattermost user id (26 characters, System Console → Users; empty skips)",
    });
    return addOwner(ctx, "mattermost", owner);
  }
}
