/** The IRC adapter's config, and the part of irc-framework's client it uses (the package has no types). */

/** What `createIrcAdapter` takes. */
export interface IrcAdapterConfig {
  server: string;
  port: number;
  tls: boolean;
  nick: string;
  channels: string[];
  password?: string | undefined;
  sasl?: { account: string; password: string } | undefined;
  /** Lines sent at once before pacing. @defaultValue 5 */
  sendBurst?: number | undefined;
  /** Lines per second after the burst. @defaultValue 1 */
  sendPerSecond?: number | undefined;
  /** A send that would wait longer than this for the budget fails as rate-limited. @defaultValue 30000 */
  maxSendWaitMs?: number | undefined;
  /** First reconnect delay; doubles up to `reconnectMaxMs`. @defaultValue 2000 */
  reconnectBaseMs?: number | undefined;
  /** @defaultValue 300000 */
  reconnectMaxMs?: number | undefined;
  /** How long a send waits for the server's PONG that confirms it. @defaultValue 15000 */
  confirmTimeoutMs?: number | undefined;
}

/** A PRIVMSG (or NOTICE, ACTION) as irc-framework emits it. */
export interface IrcMessageEvent {
  type: "privmsg" | "notice" | "action" | string;
  nick: string;
  ident: string;
  hostname: string;
  target: string;
  message: string;
  time?: number | undefined;
  account?: string | undefined;
  from_server?: boolean | undefined;
}

/** irc-framework's `Client`, as far as Herald uses it. */
export interface IrcClient {
  connect(options?: Record<string, unknown>): void;
  quit(message?: string): void;
  join(channel: string, key?: string): void;
  raw(...args: string[]): void;
  changeNick(nick: string): void;
  on(event: string, listener: (event: never) => void): this;
  removeAllListeners(): this;
  connected: boolean;
  user: { nick: string; username: string; host: string };
  connection: { end(message?: string): void };
}
