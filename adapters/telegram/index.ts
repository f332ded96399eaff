/**
 * The Telegram adapter, on grammY's fetch build (`grammy/web`: one module, where the Node build loads
 * node-fetch and its URL library at start) with Herald's keep-alive fetch on Node's http module
 * (core/node-fetch.ts: Node's built-in fetch costs more CPU per call). Receives by long polling (default) or by webhook when
 * `TELEGRAM_WEBHOOK_URL` is set; hands each message to the gateway and confirms it to Telegram only after
 * the gateway recorded it. Sends through `TelegramSender` (HTML, chunks, per-chat budget).
 */
import { createHash } from "node:crypto";
import { Bot, webhookCallback } from "grammy/web";
import { ConfigError, describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { createNodeFetch } from "../../core/node-fetch.js";
import { sleep } from "../../core/sleep.js";
import type {
  AdapterDeps,
  AdapterStatus,
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  InboundOutcome,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import type { ReplyStreams } from "../shared/reply-stream.js";
import { BAD_TOKEN_MESSAGE, errorCode, toPlatformError } from "./api-errors.js";
import { callbackQuery, clickToInbound, inlineKeyboard } from "./buttons.js";
import { telegramMenu } from "./commands.js";
import { formatChunks, type TelegramChunk } from "./format.js";
import { downloadAttachments } from "./media.js";
import { telegramMessage, toInbound } from "./parse.js";
import { ALLOWED_UPDATES, NotRecordedError, UpdatePoller } from "./poller.js";
import { DEFAULT_LIMITS, SendBudget } from "./rate-limit.js";
import type { TelegramSection } from "./section.js";
import { TelegramSender } from "./sender.js";
import { telegramStreams } from "./stream.js";
import type { BotIdentity, TelegramAdapterConfig } from "./types.js";

/** grammY's `client.fetch` (typed after node-fetch's; it calls it as the WHATWG fetch). */
type GrammyFetch = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof Bot>[1]>["client"]>["fetch"]
>;

export type { TelegramAdapterConfig, TelegramRateLimits } from "./types.js";

/** The webhook secret: the configured one, else one derived from the token (stable, never logged). */
function webhookSecretFor(config: TelegramAdapterConfig): string {
  if (config.webhookSecret) return config.webhookSecret;
  return createHash("sha256")
    .update(`herald-telegram-webhook:${config.botToken}`)
    .digest("base64url")
    .slice(0, 48);
}

export class TelegramAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  readonly sendsButtons = true;
  private readonly bot: Bot;
  private readonly sender: TelegramSender;
  private readonly streams: ReplyStreams<TelegramChunk>;
  private readonly poller: UpdatePoller;
  private readonly log: Logger;
  private readonly apiRoot: string;
  private onMessage: InboundHandler | undefined;
  private identity: BotIdentity | undefined;
  private webhook: ((request: Request) => Promise<Response>) | undefined;
  private state: AdapterStatus = { state: "stopped" };
  private started = false;

  constructor(
    private readonly config: TelegramAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger.child({ platform: "telegram" });
    this.apiRoot = (config.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
    const pollTimeoutSeconds = config.pollTimeoutSeconds ?? 30;
    this.bot = new Bot(config.botToken, {
      client: {
        apiRoot: this.apiRoot,
        timeoutSeconds: pollTimeoutSeconds + 30,
        fetch: createNodeFetch({ maxSockets: 16 }) as unknown as GrammyFetch,
      },
    });
    // Webhook updates reach the same handler as polled ones.
    this.bot.use((ctx) => this.handleUpdate(ctx.update as unknown as Record<string, unknown>));
    const limits = { ...DEFAULT_LIMITS, ...config.limits };
    const budget = new SendBudget(limits);
    this.sender = new TelegramSender(this.bot.api, budget, this.log, (buttons) =>
      inlineKeyboard(buttons, deps.kv),
    );
    this.streams = telegramStreams({ sender: this.sender, budget, limits, kv: deps.kv, logger: this.log });
    this.handleWebhook = config.webhookUrl ? (request) => this.serveWebhook(request) : undefined;
    this.poller = new UpdatePoller({
      getUpdates: (params, signal) =>
        // grammY types signals with its AbortSignal polyfill; the platform's is the same at run time.
        this.bot.api.getUpdates(
          { ...params, allowed_updates: [...params.allowed_updates] },
          signal as Parameters<typeof this.bot.api.getUpdates>[1],
        ),
      deleteWebhook: () => this.bot.api.deleteWebhook({ drop_pending_updates: false }),
      handle: (update) => this.handleUpdate(update),
      orderKey: (update) => {
        type WithChat = { chat?: { id?: unknown } } | undefined;
        const click = update["callback_query"] as { message?: WithChat } | undefined;
        const message = (update["message"] as WithChat) ?? click?.message;
        return String(message?.chat?.id ?? "other");
      },
      onState: (state, detail) => this.setState(state, detail),
      logger: this.log,
      pollTimeoutSeconds,
      backoffMs: config.backoffMs ?? 1000,
      maxBackoffMs: config.maxBackoffMs ?? 30_000,
    });
  }

  async start(onMessage: InboundHandler): Promise<void> {
    if (this.started) return;
    this.onMessage = onMessage;
    this.setState("starting");
    try {
      const me = await this.connect();
      this.identity = { id: me.id, username: me.username };
      this.bot.botInfo = me;
      if (this.config.webhookUrl) await this.startWebhook(this.config.webhookUrl);
      // A webhook left from an earlier run is deleted when the first poll meets it (409): no round
      // trip before the first poll when none is set.
      else this.poller.start();
    } catch (err) {
      const error = err instanceof PlatformError ? err : toPlatformError(err, "starting the Telegram bot");
      this.setState("failed", error.message);
      throw error;
    }
    this.started = true;
    this.setState("running");
    void this.publishCommands();
    this.log.info(
      { username: this.identity.username, mode: this.webhook ? "webhook" : "polling" },
      "telegram adapter started",
    );
  }

  /**
   * Sets the bot's command menu from the gateway's commands (`setMyCommands`). A failure is logged:
   * typed commands work without the menu.
   */
  private async publishCommands(): Promise<void> {
    if (!this.deps.commandMenu) return;
    try {
      await this.deps.commandMenuReady;
      const entries = this.deps.commandMenu();
      const commands = telegramMenu(entries);
      await this.bot.api.setMyCommands(commands);
      this.log.info({ count: commands.length }, "telegram command menu set");
    } catch (err) {
      this.log.warn(
        { error: describeError(err) },
        "telegram command menu not set; typed commands still work",
      );
    }
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    // The webhook stays registered: Telegram keeps updates for the next start.
    this.webhook = undefined;
    this.streams.stop();
    await this.poller.stop(this.config.stopGraceMs ?? 2000);
    this.setState("stopped");
  }

  /** Sends a reply; one that was streamed replaces its preview messages (see `ReplyStreams`). */
  async send(chat: ChatRef, message: OutboundMessage, options?: SendOptions): Promise<SendResult> {
    if (message.kind === "notice") return this.sender.send(chat, message, options);
    const previews = await this.streams.claim(chat, message.replyToId);
    const result = await this.sender.send(chat, message, options, previews);
    if (previews.length > 0) {
      const used = formatChunks(message.text).length;
      await this.streams.settle(chat, message.replyToId, previews, used);
    }
    return result;
  }

  /** Streams a reply into the chat as it is written (`stream: edit`). */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    return this.sender.edit(chat, messageId, text);
  }

  /** An edit without `reply_markup`: Telegram drops the inline keyboard. */
  settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    return this.sender.edit(chat, messageId, text);
  }

  deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    return this.sender.deleteMessage(chat, messageId);
  }

  sendTyping(chat: ChatRef): Promise<void> {
    // A reply being written in place says more than "typing…", and the chat's budget goes to its edits.
    if (this.streams.showing(chat)) return Promise.resolve();
    return this.sender.sendTyping(chat);
  }

  /**
   * Serves `/webhooks/telegram` (a further account's `/webhooks/telegram@<account>`) in webhook mode
   * (absent when polling, so no route is served): 401 for a wrong secret, 500 (Telegram retries) when
   * the gateway did not record the update.
   */
  readonly handleWebhook: ((request: Request) => Promise<Response>) | undefined;

  private async serveWebhook(request: Request): Promise<Response> {
    const handler = this.webhook;
    if (!handler) return new Response("telegram webhook is not enabled", { status: 404 });
    if (request.method !== "POST") return new Response("method not allowed", { status: 405 });
    try {
      return await handler(request);
    } catch (err) {
      if (err instanceof SyntaxError) {
        this.log.warn({ error: describeError(err) }, "telegram webhook body is not JSON, refused");
        return new Response("bad request", { status: 400 });
      }
      this.log.warn(
        { error: describeError(err) },
        "telegram webhook update not recorded; Telegram will retry",
      );
      return new Response("not recorded", { status: 500 });
    }
  }

  status(): AdapterStatus {
    return this.state;
  }

  private setState(state: AdapterStatus["state"], detail?: string): void {
    this.state = detail ? { state, detail } : { state };
  }

  /** `getMe`, retried while the API is unreachable (up to `startTimeoutMs`); a refused token fails at once. */
  private async connect() {
    const deadline = Date.now() + (this.config.startTimeoutMs ?? 30_000);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.bot.api.getMe();
      } catch (err) {
        const code = errorCode(err);
        if (code === 401 || code === 404) {
          throw new PlatformError(
            "telegram",
            `TELEGRAM_BOT_TOKEN is set but getMe answered ${code}: ${BAD_TOKEN_MESSAGE}`,
            {
              code: "platform_auth_failed",
            },
          );
        }
        const delayMs = Math.min(10_000, 500 * 2 ** (attempt - 1));
        if (Date.now() + delayMs > deadline) {
          throw new PlatformError(
            "telegram",
            `could not reach the Telegram Bot API at ${this.apiRoot} (${describeError(err)}). Fix: check the network, or TELEGRAM_API_ROOT if you use a local Bot API server.`,
            { retryable: true },
          );
        }
        this.log.warn({ attempt, error: describeError(err) }, "telegram getMe failed, retrying");
        await sleep(delayMs);
      }
    }
  }

  private async startWebhook(url: string): Promise<void> {
    // A further bot account is served at its own path (`/webhooks/telegram@family`).
    const path = this.deps.webhookPath ?? "/webhooks/telegram";
    const pathname = new URL(url).pathname.replace(/%40/gi, "@").replace(/\/+$/, "");
    if (!pathname.endsWith(path)) {
      this.log.warn(
        { path },
        "the webhook URL does not end in the path where the gateway serves this bot's webhook",
      );
    }
    const secretToken = webhookSecretFor(this.config);
    await this.bot.api.setWebhook(url, {
      secret_token: secretToken,
      allowed_updates: [...ALLOWED_UPDATES],
      drop_pending_updates: false,
    });
    this.webhook = webhookCallback(this.bot, "std/http", {
      secretToken,
      onTimeout: "throw",
      timeoutMilliseconds: 30_000,
    });
  }

  /**
   * One update, polled or pushed: parse, download files, hand to the gateway. Resolves when the gateway
   * recorded it (or it is skipped); rejects with NotRecordedError when recording failed.
   */
  private async handleUpdate(update: Record<string, unknown>): Promise<void> {
    const onMessage = this.onMessage;
    const identity = this.identity;
    if (onMessage && identity && update["callback_query"] !== undefined)
      return this.handleClick(update, onMessage);
    if (!onMessage || !identity || update["message"] === undefined) return;
    const parsed = telegramMessage.safeParse(update["message"]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.log.warn(
        { updateId: update["update_id"], path: issue?.path.join("."), problem: issue?.message },
        "telegram malformed update skipped",
      );
      return;
    }
    const inbound = toInbound(parsed.data, identity);
    if (!inbound) return;
    if (this.config.stream !== "off") inbound.streamReply = true;
    // Files of group messages the gateway will not answer are not worth downloading.
    if (this.deps.isAddressed?.(inbound) ?? true) {
      const { attachments, notes } = await downloadAttachments(parsed.data, {
        getFile: (fileId) => this.bot.api.getFile(fileId),
        fileUrl: (path) => `${this.apiRoot}/file/bot${this.config.botToken}/${path}`,
        cacheDir: this.deps.cacheDir,
        maxBytes: this.config.mediaMaxBytes ?? 20 * 1024 * 1024,
        logger: this.log,
      });
      if (attachments.length > 0) inbound.attachments = attachments;
      if (notes.length > 0) inbound.text = [inbound.text, ...notes].filter(Boolean).join("\n\n");
    }
    try {
      await onMessage(inbound);
    } catch (err) {
      throw new NotRecordedError(err);
    }
  }

  /**
   * A button click: the spinner stopped (`answerCallbackQuery`), the click handed to the gateway as the
   * clicker's message, then the prompt marked with the choice and its keyboard removed, unless the
   * clicker was someone the gateway refuses (another user's question in a group, a stranger).
   */
  private async handleClick(update: Record<string, unknown>, onMessage: InboundHandler): Promise<void> {
    const parsed = callbackQuery.safeParse(update["callback_query"]);
    if (!parsed.success) {
      this.log.warn({ updateId: update["update_id"] }, "telegram malformed callback query skipped");
      return;
    }
    await this.bot.api.answerCallbackQuery(parsed.data.id).catch((err: unknown) => {
      this.log.warn({ error: describeError(err) }, "telegram answerCallbackQuery failed");
    });
    const click = clickToInbound(parsed.data, this.deps.kv);
    if (!click) {
      this.log.info({ updateId: update["update_id"] }, "telegram click without known button data skipped");
      return;
    }
    let outcome: InboundOutcome;
    try {
      outcome = await onMessage(click.inbound);
    } catch (err) {
      throw new NotRecordedError(err);
    }
    if (!click.settles || (outcome !== "accepted" && outcome !== "command")) return;
    const { prompt } = click;
    await this.sender
      .settle(click.inbound.chat, prompt.messageId, `${prompt.text}\n\n✓ ${click.label}`, prompt.entities)
      .catch((err: unknown) => {
        this.log.warn({ error: describeError(err) }, "telegram prompt not marked as answered");
      });
  }
}

/** Builds the adapter. Nothing connects before `start()`. */
export function createTelegramAdapter(config: TelegramAdapterConfig, deps: AdapterDeps): TelegramAdapter {
  return new TelegramAdapter(config, deps);
}

/** The adapter's config from the `telegram:` section. @throws ConfigError when TELEGRAM_BOT_TOKEN is missing. */
export function telegramConfigFrom(section: TelegramSection, deps: AdapterDeps): TelegramAdapterConfig {
  if (!section.botToken) {
    throw new ConfigError(
      "TELEGRAM_BOT_TOKEN",
      "TELEGRAM_BOT_TOKEN is not set. Fix: create a bot with @BotFather and set its token.",
    );
  }
  return {
    botToken: section.botToken,
    apiRoot: section.apiRoot,
    webhookUrl: section.webhookUrl,
    webhookSecret: section.webhookSecret,
    mediaMaxBytes: deps.mediaMaxBytes,
    stream: section.stream,
  };
}
