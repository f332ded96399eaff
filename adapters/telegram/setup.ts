/**
 * Telegram's step of `herald setup`: the bot token, checked with getMe; the owner's user id, read from
 * a message to the bot (getUpdates) or typed.
 */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import {
  addOwner,
  apiUrl,
  callService,
  checked,
  keepApiUrl,
  secret,
  trimUrl,
  tryAgain,
} from "../../core/setup-steps.js";

const FALLBACK_ROOT = "https://api.telegram.org";

/** Telegram's getMe: the bot's username. */
export async function checkTelegram(
  apiRoot: string,
  token: string,
): Promise<{ username: string; id: number }> {
  const answer = await callService("Telegram", `${trimUrl(apiRoot)}/bot${token}/getMe`);
  if (answer.status === 401 || answer.status === 404) {
    throw new CheckFailed(
      `Telegram answered ${answer.status} to getMe: the bot token is wrong or revoked. Copy it again from @BotFather (/mybots → API Token).`,
    );
  }
  const result = answer.body["result"] as { username?: string; id?: number } | undefined;
  if (answer.status !== 200 || !result?.username)
    throw new CheckFailed(`Telegram answered ${answer.status} to getMe.`);
  return { username: result.username, id: result.id ?? 0 };
}

/**
 * Waits for the first private message to the bot and returns its sender, then confirms the update so
 * the gateway does not answer it later. Undefined when none came before `timeoutMs`.
 * @throws CheckFailed when the bot has a webhook (getUpdates is refused then).
 */
export async function waitForTelegramOwner(
  apiRoot: string,
  token: string,
  timeoutMs: number,
): Promise<{ id: string; name: string } | undefined> {
  const deadline = Date.now() + timeoutMs;
  let offset: number | undefined;
  while (Date.now() < deadline) {
    const wait = Math.max(1, Math.min(25, Math.floor((deadline - Date.now()) / 1000)));
    const query = `timeout=${wait}${offset !== undefined ? `&offset=${offset}` : ""}`;
    const answer = await callService("Telegram", `${trimUrl(apiRoot)}/bot${token}/getUpdates?${query}`, {
      timeoutMs: (wait + 10) * 1000,
    });
    if (answer.status === 409) {
      // Telegram's 409: a webhook is set, or another process (a running gateway) is polling.
      throw new CheckFailed(
        `Telegram refused getUpdates (409: ${String(answer.body["description"] ?? "conflict")}): a webhook is set or a running gateway reads the bot's messages. Stop it, or give your user id instead (--telegram-owner).`,
      );
    }
    const updates = (answer.body["result"] ?? []) as {
      update_id: number;
      message?: { chat?: { type?: string }; from?: { id: number; first_name?: string; username?: string } };
    }[];
    for (const update of updates) {
      offset = update.update_id + 1;
      const from = update.message?.from;
      if (from && update.message?.chat?.type === "private") {
        await callService(
          "Telegram",
          `${trimUrl(apiRoot)}/bot${token}/getUpdates?offset=${offset}&timeout=0`,
        );
        const name = [from.first_name, from.username ? `@${from.username}` : ""].filter(Boolean).join(" ");
        return { id: String(from.id), name: name || String(from.id) };
      }
    }
  }
  return undefined;
}

async function telegramStep(ctx: StepContext): Promise<void> {
  for (;;) {
    const token = await secret(ctx, "telegram.token", "TELEGRAM_BOT_TOKEN", "Bot token from @BotFather");
    if (!token.value) return ctx.p.say("warn", "Telegram skipped: no token.");
    const root = await apiUrl(ctx, "telegram.api_root", "telegram.api_root", FALLBACK_ROOT);
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
    keepApiUrl(ctx, "telegram.api_root", root, FALLBACK_ROOT);
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

/** Telegram in `herald setup`. */
export const telegramSetup: SetupQuestions = {
  label: "Telegram",
  hint: "a bot token from @BotFather",
  chosenBy: "telegram.token",
  flags: [
    {
      flag: "--telegram-token <token>",
      key: "telegram.token",
      env: "TELEGRAM_BOT_TOKEN",
      help: "env TELEGRAM_BOT_TOKEN",
    },
    {
      flag: "--telegram-api-root <url>",
      key: "telegram.api_root",
      env: "TELEGRAM_API_ROOT",
      help: "a local Bot API server (env TELEGRAM_API_ROOT)",
    },
    {
      flag: "--telegram-owner <id>",
      key: "telegram.owner",
      help: "your Telegram user id, added to the allowlist",
    },
    {
      flag: "--telegram-wait-owner",
      key: "telegram.owner_mode",
      value: "wait",
      help: "read your user id from the next message you send the bot",
    },
  ],
  step: telegramStep,
  imply(answers) {
    if (answers["telegram.owner"]) answers["telegram.owner_mode"] = "enter";
  },
};
