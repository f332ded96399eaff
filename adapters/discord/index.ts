/**
 * The Discord adapter, on discord.js 14: a gateway connection (guild messages, message content, DMs;
 * discord.js reconnects and resumes by itself), messages in DMs, server channels and threads passed to
 * the gateway, replies sent over REST. `start` rejects with the fix when the token is wrong or the
 * Message Content intent is off; later faults are logged and reported by `status()`.
 */
import {
  Client,
  Events,
  GatewayIntentBits,
  Options,
  Partials,
  type RateLimitData,
  type RESTOptions,
} from "discord.js";
import { ConfigError } from "../../core/errors.js";
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
import type { ReplyStreams } from "../shared/reply-stream.js";
import { BackfillCursors } from "./backfill.js";
import { actionRows, DiscordButtons } from "./buttons.js";
import { DiscordCommands } from "./commands.js";
import { apiCode, INTENT_FIX, loginError, TOKEN_FIX } from "./errors.js";
import { formatChunks } from "./format.js";
import { DiscordInbound } from "./inbound.js";
import { DiscordOutbound } from "./send.js";
import { discordStreams } from "./stream.js";
import type { DiscordAdapterConfig, ResolvedDiscordConfig } from "./types.js";

export type { DiscordAdapterConfig } from "./types.js";

/** Gateway close codes after which discord.js gives up, with what the operator should do. */
const FATAL_CLOSE: Record<number, string> = {
  4004: `the bot token was rejected. Fix: ${TOKEN_FIX}`,
  4014: `the Message Content intent is not enabled. Fix: ${INTENT_FIX}`,
  4013: "invalid gateway intents",
  4010: "invalid shard",
  4011: "sharding required",
  4012: "invalid API version",
};

interface Connection {
  client: Client;
  outbound: DiscordOutbound;
  inbound: DiscordInbound;
  commands: DiscordCommands;
  buttons: DiscordButtons;
  cursors: BackfillCursors;
  streams: ReplyStreams<string>;
}

/** One Discord bot connection. Build it with `createDiscordAdapter`. */
export class DiscordAdapter implements PlatformAdapter {
  readonly platform = "discord";
  readonly sendsButtons = true;
  private conn: Connection | undefined;
  private current: AdapterStatus = { state: "stopped" };
  private started = false;
  private starting: Promise<void> | undefined;
  private lastCloseCode: number | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: ResolvedDiscordConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger.child({ platform: "discord" });
  }

  start(onMessage: InboundHandler): Promise<void> {
    if (this.started) return Promise.resolve();
    // A second start while the first is logging in waits for that one instead of logging in again.
    this.starting ??= this.connect(onMessage).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async connect(onMessage: InboundHandler): Promise<void> {
    const { client, inbound, commands } = this.connection();
    this.current = { state: "starting" };
    this.lastCloseCode = undefined;
    inbound.open(onMessage, () => client.user?.id ?? "");
    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      timer = setTimeout(
        () => reject(new Error(`no READY from the Discord gateway within ${this.config.readyTimeoutMs} ms`)),
        this.config.readyTimeoutMs,
      );
    });
    try {
      await Promise.all([client.login(this.config.botToken), ready]);
    } catch (err) {
      const failure = loginError(err, this.lastCloseCode);
      this.current = { state: "failed", detail: failure.message };
      await this.teardown();
      throw failure;
    } finally {
      clearTimeout(timer);
    }
    this.started = true;
    this.current = { state: "running" };
    this.log.info({ botId: client.user?.id, guilds: client.guilds.cache.size }, "discord connected");
    if (this.config.registerCommands && client.application) {
      commands.sync(client.application.id).catch((err: unknown) => {
        this.log.warn(
          { err: String(err) },
          "discord slash commands not registered; text commands still work",
        );
      });
    }
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.teardown();
    this.current = { state: "stopped" };
  }

  /** Sends a reply; one that was streamed replaces its preview messages (see `ReplyStreams`). */
  async send(chat: ChatRef, message: OutboundMessage, options?: SendOptions): Promise<SendResult> {
    const { outbound, streams } = this.connection();
    if (message.kind === "notice") return outbound.send(chat, message, options);
    const previews = await streams.claim(chat, message.replyToId);
    const result = await outbound.send(chat, message, options, previews);
    if (previews.length > 0) {
      const used = formatChunks(message.text).length;
      await streams.settle(chat, message.replyToId, previews, used);
    }
    return result;
  }

  /** Streams a reply into the chat as it is written (`stream: edit`). */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.connection().streams.onEvent(chat, event);
  }

  edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    return this.connection().outbound.edit(chat, messageId, text);
  }

  settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    return this.connection().outbound.settleButtons(chat, messageId, text);
  }

  deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    return this.connection().outbound.deleteMessage(chat, messageId);
  }

  sendTyping(chat: ChatRef): Promise<void> {
    return this.connection().outbound.sendTyping(chat);
  }

  /** `running` only while the gateway session is live (READY or RESUMED, heartbeats answered). */
  status(): AdapterStatus {
    const client = this.conn?.client;
    if (this.current.state === "running" && client) {
      const ping = client.ws.ping;
      return { state: "running", detail: ping >= 0 ? `gateway ping ${Math.round(ping)} ms` : undefined };
    }
    return this.current;
  }

  /** The discord.js client and its helpers, built on first use (REST works before login). */
  private connection(): Connection {
    if (this.conn) return this.conn;
    const { config, deps } = this;
    const maxWait = config.maxRateLimitWaitMs;
    const client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.MessageContent,
        GatewayIntentBits.DirectMessages,
      ],
      // DMs arrive in channels discord.js has not cached; without these they are dropped silently.
      partials: [Partials.Channel, Partials.Message],
      rest: {
        api: config.apiUrl,
        timeout: config.restTimeoutMs,
        rejectOnRateLimit: (data: RateLimitData) => Math.max(data.retryAfter, data.timeToReset) > maxWait,
        // Node's fetch, not discord.js's undici 6 `request`: that hands its form body (files) to the
        // process-wide dispatcher, which is undici 7's when Herald's web tools loaded first, and undici 7
        // cannot send another undici's form. fetch streams the body itself.
        makeRequest: fetch as unknown as RESTOptions["makeRequest"],
      },
      makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 50 }),
    });
    client.rest.setToken(config.botToken);
    const commands = new DiscordCommands(
      client.rest,
      deps.kv,
      this.log,
      deps.commandMenu,
      deps.commandMenuReady,
    );
    const outbound = new DiscordOutbound(client.rest, {
      logger: this.log,
      editIntervalMs: config.editIntervalMs,
      typingIntervalMs: config.typingIntervalMs,
      // Server channels and active threads are always cached (GUILD_CREATE, THREAD_CREATE); DMs may not be.
      quotes: (channelId) => client.channels.cache.get(channelId)?.isDMBased() === false,
      interactions: commands,
      components: (buttons) => actionRows(buttons, deps.kv),
    });
    const buttons = new DiscordButtons(client.rest, deps.kv, this.log);
    const cursors = new BackfillCursors(deps.kv, this.log, { windowMs: config.backfillWindowMs });
    const inbound = new DiscordInbound({
      cursors,
      logger: this.log,
      cacheDir: deps.cacheDir,
      maxBytes: config.mediaMaxBytes,
      autoThread: config.autoThread,
      allowBots: config.allowBots,
      stream: config.stream !== "off",
      outbound,
    });
    const streams = discordStreams(outbound, deps.kv, this.log, config.streamIntervalMs);
    this.conn = { client, outbound, inbound, commands, buttons, cursors, streams };
    this.listen(this.conn);
    return this.conn;
  }

  private listen({ client, inbound, commands, buttons }: Connection): void {
    client.on(Events.MessageCreate, (message) => inbound.accept(message));
    client.on(Events.InteractionCreate, (interaction) => {
      if (interaction.isButton()) {
        // A click is the clicker's message (access and "only the one who asked" apply as to any).
        void buttons.accept(interaction).then((click) => {
          if (!click) return;
          inbound.enqueue(interaction.channelId, async () => {
            const outcome = await inbound.handOver(click.inbound);
            if (click.settles && (outcome === "accepted" || outcome === "command"))
              await buttons.settle(click);
          });
        });
        return;
      }
      if (!interaction.isChatInputCommand()) return;
      void commands.accept(interaction).then((message) => {
        if (!message) return;
        inbound.enqueue(interaction.channelId, async () => {
          commands.settle(interaction.id, await inbound.handOver(message));
        });
      });
    });
    // A new session (not a resume): what was sent while no session existed is only in the history.
    client.on(Events.ShardReady, () => {
      if (this.started) this.current = { state: "running" };
      if (this.conn) this.catchUp(this.conn);
    });
    client.on(Events.ShardResume, (_id, replayed) => {
      this.current = { state: "running" };
      this.log.info({ replayed }, "discord gateway resumed");
    });
    client.on(Events.ShardReconnecting, () => {
      this.current = { state: "reconnecting", detail: "gateway connection lost; resuming" };
      this.log.warn({}, "discord gateway reconnecting");
    });
    client.on(Events.ShardDisconnect, (event) => {
      this.lastCloseCode = event.code;
      const why = FATAL_CLOSE[event.code] ?? `gateway closed with code ${event.code}`;
      if (!this.started) return;
      this.current = { state: "failed", detail: `Discord gateway closed (${event.code}): ${why}` };
      this.log.error({ code: event.code, why }, "discord gateway closed for good; restart after fixing");
    });
    client.on(Events.ShardError, (error) => this.log.warn({ err: error.message }, "discord gateway error"));
    client.on(Events.Error, (error) => this.log.error({ err: error.message }, "discord client error"));
    client.on(Events.Warn, (message) => this.log.warn({ detail: message }, "discord client warning"));
  }

  /** Reads each remembered channel's history after its cursor and handles it in order. */
  private catchUp({ client, inbound, cursors }: Connection): void {
    for (const { channelId, after } of cursors.due()) {
      inbound.enqueue(channelId, async () => {
        try {
          const channel = await client.channels.fetch(channelId);
          if (!channel?.isTextBased() || !("messages" in channel)) return;
          const batch = await channel.messages.fetch({ after, limit: 50 });
          const missed = [...batch.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
          if (missed.length > 0) this.log.info({ channelId, count: missed.length }, "discord catching up");
          for (const message of missed) await inbound.handle(message);
        } catch (err) {
          const code = apiCode(err);
          if (code === 10003 || code === 50001) cursors.forget(channelId);
          this.log.warn({ channelId, err: String(err) }, "discord catch-up failed for a channel");
        }
      });
    }
  }

  private async teardown(): Promise<void> {
    const conn = this.conn;
    if (!conn) return;
    this.conn = undefined;
    conn.client.removeAllListeners(Events.MessageCreate);
    conn.client.removeAllListeners(Events.InteractionCreate);
    await conn.inbound.idle();
    conn.inbound.close();
    conn.outbound.stop();
    conn.streams.stop();
    conn.commands.stop();
    await conn.client.destroy().catch((err: unknown) => {
      this.log.warn({ err: String(err) }, "discord client did not close cleanly");
    });
  }
}

/**
 * Builds the Discord adapter. Nothing connects until `start`.
 * @throws ConfigError when DISCORD_BOT_TOKEN is missing.
 */
export function createDiscordAdapter(config: DiscordAdapterConfig, deps: AdapterDeps): DiscordAdapter {
  if (!config.botToken) {
    throw new ConfigError(
      "DISCORD_BOT_TOKEN",
      `DISCORD_BOT_TOKEN is not set. Fix: ${TOKEN_FIX} (also invite the bot to your server with the bot and applications.commands scopes).`,
    );
  }
  const resolved: ResolvedDiscordConfig = {
    botToken: config.botToken,
    apiUrl: (config.apiUrl ?? "https://discord.com/api").replace(/\/+$/, ""),
    autoThread: config.autoThread ?? false,
    allowBots: config.allowBots ?? false,
    mediaMaxBytes: config.mediaMaxBytes ?? 20 * 1024 * 1024,
    registerCommands: config.registerCommands ?? true,
    restTimeoutMs: config.restTimeoutMs ?? 15_000,
    maxRateLimitWaitMs: config.maxRateLimitWaitMs ?? 5_000,
    readyTimeoutMs: config.readyTimeoutMs ?? 30_000,
    editIntervalMs: config.editIntervalMs ?? 1_000,
    stream: config.stream ?? "edit",
    streamIntervalMs: config.streamIntervalMs ?? 1_200,
    typingIntervalMs: config.typingIntervalMs ?? 8_000,
    backfillWindowMs: config.backfillWindowMs ?? 12 * 3_600_000,
  };
  return new DiscordAdapter(resolved, deps);
}
