/** signal-cli's JSON-RPC shapes as Herald reads them, and the adapter's config. */

/** What `createSignalAdapter` takes. */
export interface SignalAdapterConfig {
  /** The bot's account (E.164). */
  account: string;
  /** signal-cli's HTTP daemon, e.g. `http://127.0.0.1:8080`. */
  httpUrl: string;
  accountUuid?: string | undefined;
  /** Reaction while a turn runs; empty: none. @defaultValue 👀 */
  workingReaction?: string | undefined;
  /** First reconnect delay of the event stream; doubles up to 30 s. @defaultValue 1000 */
  reconnectBaseMs?: number | undefined;
}

/** One attachment of a received message. */
export interface SignalAttachment {
  id?: string | undefined;
  contentType?: string | undefined;
  filename?: string | null | undefined;
  size?: number | undefined;
}

/** A mention inside a message's text (the text holds U+FFFC at `start`). */
export interface SignalMention {
  number?: string | null | undefined;
  uuid?: string | null | undefined;
  name?: string | null | undefined;
  start: number;
  length: number;
}

/** `envelope.dataMessage`. */
export interface SignalDataMessage {
  timestamp: number;
  message?: string | null | undefined;
  groupInfo?: { groupId: string; groupName?: string | undefined; type?: string | undefined } | undefined;
  mentions?: SignalMention[] | undefined;
  attachments?: SignalAttachment[] | undefined;
  quote?:
    | {
        id: number;
        author?: string | undefined;
        authorNumber?: string | undefined;
        authorUuid?: string | undefined;
      }
    | undefined;
}

/** The `params` of a `receive` notification (and the data of an SSE `receive` event). */
export interface SignalReceive {
  account?: string | undefined;
  envelope: {
    source?: string | undefined;
    sourceNumber?: string | null | undefined;
    sourceUuid?: string | undefined;
    sourceName?: string | undefined;
    timestamp: number;
    dataMessage?: SignalDataMessage | undefined;
  };
}
