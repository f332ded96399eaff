/**
 * The IRC adapter on irc-framework: connects (TLS, server password, SASL PLAIN), joins the configured
 * channels, and hands channel and private messages to the gateway. Sending is paced by a line budget
 * (flood control) and confirmed: after a reply's lines the adapter sends a PING and waits for the PONG; the
 * server answers in order, so an error numeric for the target before it (401 no such nick/channel, 403,
 * 404 cannot send) fails the send. A dropped connection is reconnected with backoff (2 s doubling to
 * 5 min), channels joined again. IRC has no message ids, edits, typing or history: nothing is replayed
 * after a restart.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { SendBudget } from "./flood.js";
import { ircLines, textBudget } from "./format.js";
import { parseMessage } from "./parse.js";
import type { IrcAdapterConfig, IrcClient, IrcMessageEvent } from "./types.js";

export type { IrcAdapterConfig } from "./types.js";

/** Error numerics that refuse a PRIVMSG, and what they mean. */
const REFUSALS: Record<string, "not_found" | "refused"> = {
  "401": "not_found", // ERR_NOSUCHNICK
  "403": "not_found", // ERR_NOSUCHCHANNEL
  "404": "refused", // ERR_CANNOTSENDTOCHAN: banned, moderated, not joined on +n
};

interface PendingSend {
  target: string;
  token: string;
  refusal?: { kind: "not_found" | "refused"; reason: string } | undefined;
  done(): void;
}

/** IRC on irc-framework. Build it with `createIrcAdapter`. */
export class IrcAdapter implements PlatformAdapter {
  readonly platform = "irc";
  private readonly log: Logger;
  private client: IrcClient | undefined;
  private state: AdapterStatus = { state: "stopped" };
  private starting: Promise<void> | undefined;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly budget: SendBudget;
  private readonly pending = new Set<PendingSend>();
  private inboundCount = 0;
  private nick: string;

  constructor(
    private readonly config: IrcAdapterConfig,
    deps: AdapterDeps,
  ) {
    this.log = deps.logger;
    this.nick = config.nick;
    this.budget = new SendBudget(config.sendBurst ?? 5, config.sendPerSecond ?? 1);
  }

  start(onMessage: InboundHandler): Promise<void> {
    this.starting ??= this.open(onMessage).catch((err: unknown) => {
      this.starting = undefined;
      this.stopped = true;
      this.state = { state: "failed", detail: describeError(err) };
      throw err;
    });
    return this.starting;
  }

  private open(onMessage: InboundHandler): Promise<void> {
    this.stopped = false;
    this.state = { state: "starting" };
    const require = createRequire(import.meta.url);
    const { Client } = require("irc-framework") as { Client: new () => IrcClient };
    const client = new Client();
    this.client = client;
    return new Promise<void>((resolve, reject) => {
      let registered = false;
      let socketError: string | undefined;
      // irc-framework keeps a socket's error and hands it over with the close.
      client.on("socket close", (err: Error | false | undefined) => {
        if (err) socketError = err.message;
      });
      client.on("registered", (e: { nick: string }) => {
        this.nick = e.nick;
        this.attempt = 0;
        registered = true;
        this.state = { state: "running" };
        for (const channel of this.config.channels) client.join(channel);
        this.log.info({ server: this.config.server, nick: e.nick }, "irc registered");
        resolve();
      });
      client.on("nick in use", () => {
        if (!registered) client.changeNick(`${this.nick}_`);
      });
      client.on("sasl failed", (e: { reason: string }) => {
        const err = new PlatformError(
          "irc",
          `SASL login as ${this.config.sasl?.account ?? "?"} failed on ${this.config.server} (${e.reason}). Fix: check IRC_SASL_ACCOUNT and IRC_SASL_PASSWORD (your services account), or unset them.`,
          { code: "platform_auth_failed" },
        );
        if (!registered) {
          this.stopped = true;
          client.quit();
          reject(err);
        } else this.log.error({ error: err.message }, "irc sasl failed");
      });
      client.on("message", (e: IrcMessageEvent) => void this.onIncoming(e, onMessage));
      client.on("raw", (e: { line: string; from_server: boolean }) => {
        if (e.from_server) this.onRaw(e.line);
      });
      client.on("close", () => {
        this.state = this.stopped ? { state: "stopped" } : { state: "reconnecting" };
        for (const p of this.pending) p.done();
        if (!registered && !this.stopped) {
          this.stopped = true;
          reject(
            new PlatformError(
              "irc",
              `Could not connect to IRC server ${this.config.server}:${this.config.port}${this.config.tls ? " (TLS)" : ""}${socketError ? `: ${socketError}` : ""}. Fix: check IRC_SERVER, IRC_PORT and IRC_TLS (the server's certificate must be valid for its name).`,
              { retryable: true },
            ),
          );
          return;
        }
        registered = false;
        if (!this.stopped) this.scheduleReconnect(client);
      });
      client.connect(this.connectOptions());
    });
  }

  private connectOptions(): Record<string, unknown> {
    const c = this.config;
    return {
      host: c.server,
      port: c.port,
      tls: c.tls,
      // The server's certificate is checked (irc-framework passes undefined through; be explicit).
      rejectUnauthorized: true,
      nick: this.config.nick,
      username: this.config.nick.slice(0, 10),
      gecos: "Herald",
      password: c.password,
      ...(c.sasl ? { account: { account: c.sasl.account, password: c.sasl.password } } : { account: {} }),
      sasl_disconnect_on_fail: true,
      auto_reconnect: false,
      // The budget splits lines itself; irc-framework must not split them again.
      message_max_length: 510,
      version: "Herald",
    };
  }

  private scheduleReconnect(client: IrcClient): void {
    const base = this.config.reconnectBaseMs ?? 2000;
    const wait = Math.min(base * 2 ** this.attempt, this.config.reconnectMaxMs ?? 300_000);
    this.attempt++;
    this.log.warn({ server: this.config.server, retryInMs: wait }, "irc connection lost; reconnecting");
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.stopped && this.client === client) client.connect(this.connectOptions());
    }, wait);
    this.reconnectTimer.unref?.();
  }

  private async onIncoming(event: IrcMessageEvent, onMessage: InboundHandler): Promise<void> {
    const message = parseMessage(
      event,
      this.nick,
      `${Date.now()}-${++this.inboundCount}-${randomUUID().slice(0, 8)}`,
    );
    if (!message) return;
    try {
      await onMessage(message);
    } catch (err) {
      this.log.error({ error: describeError(err) }, "irc message not recorded");
    }
  }

  /** Error numerics and PONGs for the sends waiting on them. */
  private onRaw(line: string): void {
    const parts = line.replace(/^@\S+ /, "").split(" ");
    const command = parts[1] ?? "";
    if (command === "PONG") {
      const token = line.slice(line.lastIndexOf(":") + 1).trim();
      for (const p of this.pending) if (p.token === token) p.done();
      return;
    }
    const kind = REFUSALS[command];
    if (!kind) return;
    const target = (parts[3] ?? "").toLowerCase();
    const reason = line.includes(" :") ? line.slice(line.indexOf(" :", 1) + 2) : command;
    for (const p of this.pending) if (p.target.toLowerCase() === target) p.refusal ??= { kind, reason };
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    await starting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client?.connected) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        client.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
        client.quit("Herald stopping");
      });
    }
    client?.removeAllListeners();
    this.state = { state: "stopped" };
  }

  status(): AdapterStatus {
    return this.state;
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const client = this.client;
    if (!client?.connected || this.state.state !== "running") {
      throw new PlatformError(
        "irc",
        `Not connected to ${this.config.server}; the reply waits for the reconnect.`,
        {
          retryable: true,
          retryAfterMs: 5000,
        },
      );
    }
    const target = chat.chatId;
    const files = (message.files ?? []).map((f) => `[file not sent on IRC: ${f.fileName ?? f.path}]`);
    const asker = /^[#&+!]/.test(target) ? message.inboundMeta?.["nick"] : undefined;
    const text = [asker ? `${asker}: ${message.text}` : message.text, ...files].filter(Boolean).join("\n");
    const lines = ircLines(text, textBudget(target, client.user));
    const from = options.fromChunk ?? 0;
    const wait = this.budget.waitFor(lines.length - from > 0 ? 1 : 0);
    const maxWait = this.config.maxSendWaitMs ?? 30_000;
    if (wait > maxWait) {
      throw new PlatformError("irc", `Flood control: the send budget is used up for ${wait} ms.`, {
        code: "platform_rate_limited",
        retryable: true,
        retryAfterMs: wait,
      });
    }
    const ids: string[] = [];
    if (from >= lines.length) return { messageIds: ids };
    // Lines are paced by the budget; one PING after them confirms them all (the server answers in order).
    await this.confirmed(client, target, async () => {
      for (let i = from; i < lines.length; i++) {
        await this.budget.take(options.signal);
        client.raw("PRIVMSG", target, lines[i]!);
      }
    });
    const stamp = Date.now();
    for (let i = from; i < lines.length; i++) {
      const id = `${stamp}-${i}`;
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    return { messageIds: ids };
  }

  /** Runs `write`, then PINGs and waits for the PONG; an error numeric for `target` before it fails. */
  private async confirmed(client: IrcClient, target: string, write: () => Promise<void>): Promise<void> {
    const token = `herald-${randomUUID().slice(0, 12)}`;
    let timer: NodeJS.Timeout | undefined;
    let answer: (ok: boolean) => void = () => undefined;
    const answered = new Promise<boolean>((resolve) => {
      answer = resolve;
    });
    const entry: PendingSend = { target, token, done: () => answer(true) };
    this.pending.add(entry);
    try {
      await write();
      timer = setTimeout(() => answer(false), this.config.confirmTimeoutMs ?? 15_000);
      client.raw("PING", token);
      const ok = await answered;
      if (entry.refusal) {
        const { kind, reason } = entry.refusal;
        throw kind === "not_found"
          ? new PlatformError("irc", `IRC has no ${target} (${reason}).`)
          : new PlatformError(
              "irc",
              `${this.config.server} refuses messages from ${this.nick} to ${target} (${reason}): banned, moderated, or not joined. Fix: ask a channel operator for voice, or add the channel to IRC_CHANNELS.`,
              { code: "platform_auth_failed" },
            );
      }
      if (!ok || !client.connected) {
        throw new PlatformError("irc", `The server did not confirm the message to ${target}.`, {
          retryable: true,
        });
      }
    } finally {
      clearTimeout(timer);
      this.pending.delete(entry);
    }
  }
}

/** Builds the IRC adapter (connects on `start`). */
export function createIrcAdapter(config: IrcAdapterConfig, deps: AdapterDeps): IrcAdapter {
  return new IrcAdapter(config, deps);
}
