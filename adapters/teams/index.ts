/**
 * The Microsoft Teams adapter, on Bot Framework (`botbuilder`'s CloudAdapter): Teams posts activities
 * to `/webhooks/teams` (`handleWebhook`), each checked against Bot Framework's signing keys before
 * anything else reads it; replies, updates and deletions go through the connector at the
 * conversation's `serviceUrl`, kept per chat in the adapter's store so a reply after a restart still
 * finds its way. Personal chats are DMs; in group chats and channels the bot answers when mentioned,
 * and a channel's reply chain is its own thread and session. Buttons are Adaptive Cards (a click comes
 * back as a message whose `value` is the button's data); streamed replies update one message in place;
 * files come in through their download URLs (see `media.ts` for what goes out). A malformed or
 * unsigned request is logged and answered 400/401; the adapter runs on.
 */
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { AdapterLifecycle } from "../shared/lifecycle.js";
import { type ReplyStreams, sameChunk } from "../shared/reply-stream.js";
import { TeamsTokens } from "./auth.js";
import { TeamsConnector, UnauthenticatedError } from "./connector.js";
import { buttonCard, teamsChunks } from "./format.js";
import { outboundFiles, saveFiles } from "./media.js";
import {
  clickedData,
  conversationOf,
  LABEL_KEY,
  MalformedActivityError,
  parseActivity,
  readActivity,
} from "./parse.js";
import { teamsStreams, textActivity } from "./stream.js";
import type { OutActivity, TeamsActivity, TeamsAdapterConfig, TeamsChatRef } from "./types.js";

export type { TeamsAdapterConfig } from "./types.js";

/** Teams through Bot Framework. Build it with `createTeamsAdapter`. */
export class TeamsAdapter implements PlatformAdapter {
  readonly platform = "teams";
  readonly sendsButtons = true;
  private readonly log: Logger;
  private readonly tokens: TeamsTokens;
  private readonly streams: ReplyStreams<string>;
  private connector: TeamsConnector | undefined;
  private readonly life = new AdapterLifecycle();

  constructor(
    private readonly config: TeamsAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger;
    this.tokens = new TeamsTokens(config);
    this.streams = teamsStreams(
      () => this.connector,
      (chat) => this.refOf(chat),
      deps.kv,
      this.log,
    );
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    const connector = await TeamsConnector.create(this.config, this.tokens, this.log);
    try {
      await this.tokens.get();
    } catch (err) {
      // A refused secret is for the operator to fix now; a login endpoint that is down is retried per send.
      if (err instanceof PlatformError && err.code === "platform_auth_failed") throw err;
      this.log.warn({ error: describeError(err) }, "teams sign-in failed; retried at the first send");
    }
    this.connector = connector;
    this.log.info({ appId: this.config.appId }, "teams receiving at /webhooks/teams");
  }

  async stop(): Promise<void> {
    await this.life.stop();
    this.connector = undefined;
    this.streams.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** One POST from Teams: 401 unless signed, 400 when malformed, 200 once the gateway recorded it. */
  async handleWebhook(request: Request): Promise<Response> {
    const connector = this.connector;
    const onMessage = this.life.onMessage;
    if (!connector || !onMessage || request.method !== "POST") return new Response(null, { status: 503 });
    let activity: TeamsActivity;
    try {
      activity = readActivity(JSON.parse(await request.text()));
    } catch (err) {
      const detail = err instanceof MalformedActivityError ? err.message : "body is not JSON";
      this.log.warn({ error: detail }, "teams activity malformed; skipped");
      return new Response(null, { status: 400 });
    }
    try {
      await connector.receive(activity, request.headers.get("authorization") ?? "", (a) =>
        this.onActivity(a, onMessage),
      );
      return new Response(null, { status: 200 });
    } catch (err) {
      if (err instanceof UnauthenticatedError) {
        this.log.warn({ error: err.message }, "teams request refused: its token did not check out");
        return new Response(null, { status: 401 });
      }
      this.log.error({ error: describeError(err) }, "teams activity not recorded; Teams will send it again");
      return new Response(null, { status: 500 });
    }
  }

  private async onActivity(activity: TeamsActivity, onMessage: InboundHandler): Promise<void> {
    const message = parseActivity(activity);
    if (!message) return;
    const tenantId = activity.conversation.tenantId ?? activity.channelData?.tenant?.id;
    const ref: TeamsChatRef = {
      serviceUrl: activity.serviceUrl,
      tenantId,
      conversationType: activity.conversation.conversationType,
    };
    this.deps.kv.set(`chat:${message.chat.chatId}`, JSON.stringify(ref));
    if (
      (activity.attachments?.length ?? 0) > 0 &&
      !message.viaButton &&
      (this.deps.isAddressed?.(message) ?? true)
    ) {
      const saved = await saveFiles(activity, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        tokens: this.tokens,
        logger: this.log,
      });
      if (saved.files.length) message.attachments = saved.files;
      if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
      if (!message.text && !saved.files.length) return;
    }
    if (this.config.stream !== "off") message.streamReply = true;
    await onMessage(message);
    if (message.viaButton && activity.replyToId) await this.settleClicked(message.chat, activity);
  }

  /** Marks a clicked card answered: its text, then the clicked label; the buttons go. */
  private async settleClicked(chat: ChatRef, activity: TeamsActivity): Promise<void> {
    const cardId = activity.replyToId!;
    const value = activity.value as Record<string, unknown>;
    const label = typeof value[LABEL_KEY] === "string" ? value[LABEL_KEY] : clickedData(activity);
    const text = this.deps.kv.get(`card:${cardId}`) ?? "";
    await this.settleButtons(chat, cardId, `${text}\n\n✓ ${label}`.trim()).catch((err: unknown) =>
      this.log.warn({ error: describeError(err) }, "teams card could not be marked answered"),
    );
  }

  /** Where `chat`'s messages go: its conversation's connector as last seen, or the configured one. */
  private refOf(chat: ChatRef): TeamsChatRef {
    const raw = this.deps.kv.get(`chat:${chat.chatId}`);
    if (raw) return JSON.parse(raw) as TeamsChatRef;
    return { serviceUrl: this.config.serviceUrl, tenantId: this.config.tenantId };
  }

  private live(): TeamsConnector {
    if (!this.connector)
      throw new PlatformError("teams", "The Teams adapter is not running.", { retryable: true });
    return this.connector;
  }

  /**
   * Sends a reply; a streamed one replaces its preview (updated) instead of posting again. Buttons make
   * the last message an Adaptive Card; images go inline on the last message, other files are named.
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const connector = this.live();
    const ref = this.refOf(chat);
    const conversation = conversationOf(chat);
    const files = await outboundFiles(message.files ?? []);
    const chunks = teamsChunks([message.text, ...files.notes].filter(Boolean).join("\n\n"));
    if (chunks.length === 0) chunks.push("");
    const previews = message.kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const last = chunks.length - 1;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const text = chunks[i]!;
      const buttons = i === last && message.buttons?.length ? message.buttons : undefined;
      const attachments = i === last ? files.attachments : [];
      const activity: OutActivity = buttons
        ? { type: "message", attachments: [buttonCard(text, buttons)] }
        : { ...textActivity(text), attachments };
      const preview = previews[i];
      let id: string;
      if (preview && !buttons && attachments.length === 0 && sameChunk(preview, text)) id = preview.id;
      else if (preview) {
        await connector.update(ref, conversation, preview.id, activity);
        id = preview.id;
      } else id = await connector.send(ref, conversation, activity);
      if (buttons) this.deps.kv.set(`card:${id}`, text);
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    return { messageIds: ids };
  }

  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  async edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const [first] = teamsChunks(text);
    await this.live().update(this.refOf(chat), conversationOf(chat), messageId, textActivity(first ?? ""));
  }

  async settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    await this.edit(chat, messageId, text);
    this.deps.kv.delete(`card:${messageId}`);
  }

  async deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    try {
      await this.live().delete(this.refOf(chat), conversationOf(chat), messageId);
    } catch (err) {
      // Already gone: what the caller wanted.
      if (!(err instanceof PlatformError && /answered 404/.test(err.message))) throw err;
    }
  }

  async sendTyping(chat: ChatRef): Promise<void> {
    if (this.streams.showing(chat) || !this.connector) return;
    try {
      await this.connector.send(this.refOf(chat), conversationOf(chat), { type: "typing" });
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "teams typing failed");
    }
  }
}

/** Builds the Teams adapter (loads botbuilder on `start`). */
export function createTeamsAdapter(config: TeamsAdapterConfig, deps: AdapterDeps): TeamsAdapter {
  return new TeamsAdapter(config, deps);
}
