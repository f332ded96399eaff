/**
 * Which conversation a mail belongs to. A thread is named by the bare Message-ID of its first message
 * (the root). Every Message-ID seen, inbound and our own replies, is mapped to its root in the adapter's
 * key-value store, so a reply found through `In-Reply-To`/`References` lands in the same session; a
 * normalised subject from the same sender is the last resort for clients that drop those headers.
 */
import type { KeyValueStore } from "../../core/types.js";
import { hasReplyPrefix, normalizeSubject } from "./quote.js";
import type { ThreadMeta } from "./types.js";

/** `<abc@host>` → `abc@host` (the form used in chat refs and as the gateway's message id). */
export function bareId(id: string): string {
  return id.trim().replace(/^<+/, "").replace(/>+$/, "");
}

/** `abc@host` → `<abc@host>` (the header form). */
export function headerId(id: string): string {
  return `<${bareId(id)}>`;
}

/** The Message-IDs in a References/In-Reply-To value, in order, bare. */
export function parseIds(value: string | string[] | undefined): string[] {
  if (!value) return [];
  const text = Array.isArray(value) ? value.join(" ") : value;
  const ids = text.match(/<[^<>\s]+>/g) ?? [];
  return ids.map(bareId);
}

/** What thread resolution looks at. Ids bare. */
export interface ThreadLookup {
  messageId: string;
  inReplyTo: string[];
  references: string[];
  subject: string;
  /** Sender address, lowercased. */
  from: string;
}

/** Message-ID → thread root, and the latest header facts per thread, on the adapter's key-value store. */
export class ThreadStore {
  constructor(private readonly kv: KeyValueStore) {}

  /** The root of the thread `mail` belongs to (its own id when it starts a new one). */
  resolve(mail: ThreadLookup): string {
    const candidates = [...mail.inReplyTo, ...[...mail.references].reverse()];
    for (const id of candidates) {
      const root = this.kv.get(`thread:${id}`);
      if (root) return root;
    }
    // A reply to mail we never saw: the first reference is the thread's first message (RFC 5322 3.6.4).
    const first = mail.references[0] ?? mail.inReplyTo[0];
    if (first) return first;
    if (hasReplyPrefix(mail.subject)) {
      const root = this.kv.get(subjectKey(mail.from, mail.subject));
      if (root) return root;
    }
    return mail.messageId;
  }

  /** Records that `messageId` (bare) belongs to `root`, and the thread's subject for this correspondent. */
  remember(messageId: string, root: string, correspondent: string, subject: string): void {
    this.kv.set(`thread:${messageId}`, root);
    if (normalizeSubject(subject)) this.kv.set(subjectKey(correspondent, subject), root);
  }

  /** Header facts of the latest message in the thread (for a send that comes without inbound meta). */
  lastMeta(root: string): ThreadMeta | undefined {
    const raw = this.kv.get(`thread-meta:${root}`);
    if (!raw) return undefined;
    try {
      return JSON.parse(raw) as ThreadMeta;
    } catch {
      return undefined;
    }
  }

  setLastMeta(root: string, meta: ThreadMeta): void {
    this.kv.set(`thread-meta:${root}`, JSON.stringify(meta));
  }

  /**
   * Keeps the start of a message that opened a thread (a scheduled report): a reply to it starts a new
   * session, which would otherwise not know what the user answers.
   */
  rememberOpening(messageId: string, subject: string, text: string): void {
    this.kv.set(`opening:${messageId}`, JSON.stringify({ subject, text: text.slice(0, MAX_OPENING_CHARS) }));
  }

  /** The opening message `messageId` (bare) if it is one we sent. */
  opening(messageId: string): { subject: string; text: string } | undefined {
    const raw = this.kv.get(`opening:${messageId}`);
    if (!raw) return undefined;
    try {
      return JSON.parse(raw) as { subject: string; text: string };
    } catch {
      return undefined;
    }
  }
}

const MAX_OPENING_CHARS = 4000;

function subjectKey(correspondent: string, subject: string): string {
  return `subject:${correspondent.toLowerCase()}:${normalizeSubject(subject)}`;
}

/**
 * `References` for a reply to `meta`: its references plus its own id. Long chains keep the first id
 * (the root) and the most recent ones, as mail clients do.
 */
export function replyReferences(meta: ThreadMeta): string {
  const ids = [...parseIds(meta.references), ...parseIds(meta.messageId)].map(headerId);
  const unique = ids.filter((id, i) => ids.indexOf(id) === i);
  const kept = unique.length > 20 ? [unique[0]!, ...unique.slice(-19)] : unique;
  return kept.join(" ");
}
