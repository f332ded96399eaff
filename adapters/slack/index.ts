/**
 * Slack adapter on @slack/bolt. Events arrive over Socket Mode when an app token is configured, else as
 * HTTP Events API requests on the gateway's server (`/webhooks/slack`); both go through bolt's
 * `processEvent` (authorization, ignoring the bot's own events, listeners) via Herald's own receivers,
 * which acknowledge an event only after it is recorded (see `receiver.ts`). Replies go into the thread of
 * the message they answer, rendered as mrkdwn and split at 4,000 characters.
 */
import { basename } from "node:path";
import { App, webApi } from "@slack/bolt";
import { ConfigError, describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
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
import { type ReplyStreams, sameChunk } from "../shared/reply-stream.js";
import { SlackApi } from "./api.js";
import { authenticate } from "./auth.js";
import { ACTION_PREFIX, buttonBlocks, clickToInbound } from "./buttons.js";
import { SlackDirectory } from "./directory.js";
import { ReactionFeedback } from "./feedback.js";
import { downloadFiles } from "./files.js";
import { markdownToMrkdwn, renderChunks, SLACK_MAX_CHARS } from "./format.js";
import { type ParsedEvent, parseSlackEvent } from "./parse.js";
import { WebhookReceiver } from "./receiver.js";
import { slackSdkLogger } from "./sdk-logger.js";
import { SocketReceiver } from "./socket.js";
import { postChunk, slackStreams, updateChunk } from "./stream.js";
import type { SlackAdapterConfig, SlackIdentity } from "./types.js";

export type { SlackAdapterConfig } from "./types.js";

type Message = Extract<ParsedEvent, { kind: "message" }>;

/** The Slack PlatformAdapter. Build it with `createSlackAdapter`. */
export class SlackAdapter implements PlatformAdapter {
  readonly platform = "slack";
  readonly sendsButtons = true;
  private readonly log: Logger;
  private readonly clientOptions: webApi.WebClientOptions;
  private readonly api: SlackApi;
  private readonly feedback: ReactionFeedback;
  private readonly directory: SlackDirectory;
  private readonly streams: ReplyStreams<string>;
  private app: App | undefined;
  private receiver: WebhookReceiver | SocketReceiver | undefined;
  private identity: SlackIdentity | undefined;
  private onMessage: InboundHandler | undefined;
  private current: AdapterStatus = { state: "stopped" };
  private readonly inflight = new Map<string, Promise<void>>();
  /** Who wrote recent messages (`channel:ts` → user): whose question a prompt in a thread answers. */
  private readonly senders = new Map<string, string>();
  private abort = new AbortController();

  constructor(
    private readonly config: SlackAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger.child({ platform: "slack" });
    this.clientOptions = {
      slackApiUrl: config.apiUrl ?? "https://slack.com/api/",
      // 429s come back to us (per-method bookkeeping, the outbox retries): the SDK's default pauses
      // every call of the client, in every chat, for the whole Retry-After.
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: config.requestTimeoutMs ?? 60_000,
      logger: slackSdkLogger(this.log, "slack-web-api"),
    };
    this.api = new SlackApi(new webApi.WebClient(config.botToken, { ...this.clientOptions }));
    this.feedback = new ReactionFeedback(this.api, this.log, {
      reaction: config.workingReaction ?? "eyes",
      idleMs: config.workingIdleMs,
    });
    this.directory = new SlackDirectory(this.api, this.log);
    this.streams = slackStreams(this.api, deps.kv, this.log);
  }

  async start(onMessage: InboundHandler): Promise<void> {
    if (this.app) return;
    this.current = { state: "starting" };
    this.abort = new AbortController();
    try {
      const me = await authenticate(this.api, this.log);
      const receiver = this.buildReceiver();
      const app = new App({
        token: this.config.botToken,
        botUserId: me.botUserId,
        ...(me.botId ? { botId: me.botId } : {}),
        tokenVerificationEnabled: false, // auth.test ran above, with clearer errors
        receiver,
        clientOptions: { ...this.clientOptions },
        logger: slackSdkLogger(this.log, "slack-bolt"),
        convoStore: false,
      });
      app.event("message", async ({ event }) => this.handleEvent(event));
      app.event("app_mention", async ({ event }) => this.handleEvent(event));
      app.action({ action_id: new RegExp(`^${ACTION_PREFIX}`) }, async ({ ack, body }) => {
        await ack();
        await this.handleClick(body);
      });
      app.error(async (error) => {
        throw (error as { original?: unknown }).original ?? error;
      });
      this.identity = me;
      this.onMessage = onMessage;
      this.receiver = receiver;
      await app.start();
      this.app = app;
      this.current = { state: "running" };
      this.log.info(
        { botUserId: me.botUserId, mode: this.config.appToken ? "socket" : "http" },
        "slack adapter started",
      );
    } catch (err) {
      this.onMessage = undefined;
      this.receiver = undefined;
      const error =
        err instanceof PlatformError ? err : new PlatformError("slack", describeError(err), { cause: err });
      this.current = { state: "failed", detail: error.message };
      throw error;
    }
  }

  async stop(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    if (!app) return;
    await app
      .stop()
      .catch((err: unknown) => this.log.warn({ error: describeError(err) }, "slack receiver stop failed"));
    this.abort.abort();
    await Promise.allSettled([...this.inflight.values()]);
    this.feedback.stop();
    this.streams.stop();
    this.onMessage = undefined;
    this.receiver = undefined;
    this.current = { state: "stopped" };
  }

  /**
   * Sends a reply; one that was streamed replaces its preview messages (chat.update) instead of posting
   * again, and deletes previews the final text no longer needs.
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = renderChunks(message.text);
    const files = message.files ?? [];
    const previews = message.kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const messageIds: string[] = [];
    // Text chunks first, then one upload per file; `fromChunk` counts both, so a retry skips what went out.
    for (let i = options.fromChunk ?? 0; i < chunks.length + files.length; i++) {
      options.signal?.throwIfAborted();
      let id: string;
      // Buttons go on the last text chunk, also when it replaces a streamed preview.
      const buttons = i === chunks.length - 1 && message.buttons?.length ? message.buttons : undefined;
      const blocks =
        buttons && i < chunks.length ? { blocks: buttonBlocks(chunks[i]!, buttons, this.deps.kv) } : {};
      const preview = i < chunks.length ? previews[i] : undefined;
      if (
        preview &&
        ((!buttons && sameChunk(preview, chunks[i])) ||
          (await updateChunk(this.api, chat, preview.id, chunks[i]!, blocks)))
      ) {
        id = preview.id;
      } else if (i < chunks.length) {
        id = await postChunk(this.api, chat, chunks[i]!, blocks);
      } else {
        const file = files[i - chunks.length]!;
        const fileName = file.fileName ?? basename(file.path);
        id = await this.api.upload({
          channel: chat.chatId,
          threadTs: chat.threadId,
          path: file.path,
          fileName,
          caption: file.caption,
        });
      }
      messageIds.push(id);
      options.onChunkSent?.(i, id);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    if (message.kind !== "notice") await this.feedback.replied(chat, message.replyToId);
    return { messageIds };
  }

  /** Streams a reply into the chat as it is written (`stream: edit`). */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  async edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const rendered = markdownToMrkdwn(text).slice(0, SLACK_MAX_CHARS);
    await this.api.call("chat.update", { channel: chat.chatId, ts: messageId, text: rendered }, chat.chatId);
  }

  /** The prompt's new text, its actions block gone (`blocks: []`). */
  async settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const rendered = markdownToMrkdwn(text).slice(0, SLACK_MAX_CHARS);
    await this.api.call(
      "chat.update",
      { channel: chat.chatId, ts: messageId, text: rendered, blocks: [] },
      chat.chatId,
    );
  }

  async deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    try {
      await this.api.call("chat.delete", { channel: chat.chatId, ts: messageId }, chat.chatId);
    } catch (err) {
      if (/message_not_found/.test(describeError(err))) return;
      throw err;
    }
  }

  async sendTyping(chat: ChatRef): Promise<void> {
    await this.feedback.typing(chat);
  }

  async handleWebhook(request: Request): Promise<Response> {
    if (this.receiver instanceof WebhookReceiver) return this.receiver.handle(request);
    const why = this.config.appToken
      ? "Herald's Slack adapter uses Socket Mode"
      : "Herald's Slack adapter is not running";
    return new Response(why, { status: this.config.appToken ? 404 : 503 });
  }

  status(): AdapterStatus {
    return this.current;
  }

  private buildReceiver(): WebhookReceiver | SocketReceiver {
    const ackDeadlineMs = this.config.ackDeadlineMs ?? 2500;
    if (this.config.appToken) {
      return new SocketReceiver({
        appToken: this.config.appToken,
        apiUrl: this.clientOptions.slackApiUrl!,
        ackDeadlineMs,
        reconnectBaseMs: this.config.reconnectBaseMs ?? 1000,
        logger: this.log,
        sdkLogger: slackSdkLogger(this.log, "slack-socket-mode"),
        onStatus: (status) => {
          if (this.app) this.current = status;
        },
      });
    }
    return new WebhookReceiver({
      signingSecret: this.config.signingSecret!,
      ackDeadlineMs,
      logger: this.log,
    });
  }

  /** A `message` or `app_mention` event from bolt. Throws only when the gateway could not record it. */
  private async handleEvent(payload: unknown): Promise<void> {
    const parsed = parseSlackEvent(payload, this.identity!);
    if (parsed.kind === "malformed") {
      this.log.warn({ issues: parsed.issues }, "slack event malformed; skipped");
      return;
    }
    if (parsed.kind === "skip") {
      this.log.debug({ reason: parsed.reason }, "slack event skipped");
      return;
    }
    // The message and app_mention copies of one message, or a retry while the first is still being
    // recorded: wait for that one instead of downloading its files twice.
    const id = parsed.message.messageId;
    const running = this.inflight.get(id);
    if (running) {
      this.log.debug({ messageId: id }, "slack event joins the delivery of the same message in progress");
      return running;
    }
    const work = this.deliver(parsed).finally(() => this.inflight.delete(id));
    this.inflight.set(id, work);
    return work;
  }

  private async deliver({ message, files }: Message): Promise<void> {
    const onMessage = this.onMessage;
    if (!onMessage) throw new Error("the Slack adapter is stopping; the event stays unacknowledged");
    if (!message.sender.name) message.sender.name = await this.directory.userName(message.sender.id);
    if (files.length) {
      const apiUrl = new URL(this.clientOptions.slackApiUrl!);
      const got = await downloadFiles(files, {
        botToken: this.config.botToken,
        cacheDir: this.deps.cacheDir,
        maxBytes: this.config.maxFileBytes ?? 20 * 1024 * 1024,
        apiHost: apiUrl.host,
        logger: this.log,
        signal: this.abort.signal,
      });
      if (got.attachments.length) message.attachments = got.attachments;
      if (got.notes.length) message.text = [message.text, ...got.notes].filter(Boolean).join("\n");
    }
    const ts = message.replyToId!;
    this.senders.set(`${message.chat.chatId}:${ts}`, message.sender.id);
    if (this.senders.size > 2000) this.senders.delete(this.senders.keys().next().value!);
    if (this.config.stream !== "off") message.streamReply = true;
    this.feedback.noted(message.chat, ts);
    let outcome: InboundOutcome | undefined;
    try {
      outcome = await onMessage(message);
    } finally {
      if (outcome !== "accepted") this.feedback.unnoted(message.chat, ts);
    }
    this.log.debug({ messageId: message.messageId, outcome }, "slack message delivered to the gateway");
  }

  /**
   * A button click: handed to the gateway as the clicker's message (throws when it was not recorded,
   * so the payload stays unacknowledged), then the prompt shows the choice without its buttons, unless
   * the clicker answered someone else's question in a channel (the gateway refuses that).
   */
  private async handleClick(body: unknown): Promise<void> {
    const click = clickToInbound(body, this.deps.kv);
    const onMessage = this.onMessage;
    if (!click || !onMessage) {
      this.log.info({}, "slack click without known button data skipped");
      return;
    }
    const outcome = await onMessage(click.inbound);
    const asker = click.threadTs ? this.senders.get(`${click.channel}:${click.threadTs}`) : undefined;
    const settles = click.inbound.chatType === "dm" || !asker || asker === click.inbound.sender.id;
    if (!settles || (outcome !== "accepted" && outcome !== "command")) return;
    const text = `${click.text}\n\n✓ ${click.label}`;
    await this.api
      .call("chat.update", { channel: click.channel, ts: click.ts, text, blocks: [] }, click.channel)
      .catch((err: unknown) =>
        this.log.warn({ error: describeError(err) }, "slack prompt not marked as answered"),
      );
  }
}

/**
 * Builds the Slack adapter.
 * @throws ConfigError when a token is missing or of the wrong kind.
 */
export function createSlackAdapter(config: SlackAdapterConfig, deps: AdapterDeps): SlackAdapter {
  if (!config.botToken) {
    throw new ConfigError(
      "SLACK_BOT_TOKEN",
      "SLACK_BOT_TOKEN is not set. Fix: set it to your Slack app's Bot User OAuth Token (xoxb-…).",
    );
  }
  if (!config.botToken.startsWith("xoxb-")) {
    throw new ConfigError(
      "SLACK_BOT_TOKEN",
      `SLACK_BOT_TOKEN must be a bot token starting with xoxb-, got one starting with '${config.botToken.slice(0, 5)}'. Fix: copy the Bot User OAuth Token from OAuth & Permissions.`,
    );
  }
  if (config.appToken && !config.appToken.startsWith("xapp-")) {
    throw new ConfigError(
      "SLACK_APP_TOKEN",
      "SLACK_APP_TOKEN must be an app-level token starting with xapp-. Fix: create one with the connections:write scope under Basic Information → App-Level Tokens.",
    );
  }
  if (!config.appToken && !config.signingSecret) {
    throw new ConfigError(
      "SLACK_SIGNING_SECRET",
      "Neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP events) is set. Fix: set one of them from your Slack app's settings.",
    );
  }
  return new SlackAdapter(config, deps);
}
