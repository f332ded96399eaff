/**
 * Sender tags. In a group session several people share (`sessions.group_sessions: shared`), each user
 * message is stored with its sender's name in front: `[Alice] what's the weather?`. The tag is the
 * gateway's, added once when the turn is created; the user's own text follows it unchanged, so a user
 * who types `[Bob] …` is stored as `[Alice] [Bob] …`: only the first tag names the sender.
 *
 * A label is the platform's display name, cleaned so it cannot close the tag early or fake a
 * disambiguator (no brackets, no `#`, no line breaks or control characters, at most
 * {@link MAX_NAME_CHARS}). Two people never share a label within a session: whoever comes second with
 * a name already taken gets ` #` and a short hash of their platform user id (`Alice #3f2a`), which
 * nobody can choose and which shows no phone number or address. See `gateway/speakers.ts`.
 */
import { createHash } from "node:crypto";
import type { ChatType, GroupSessionMode } from "./types.js";

/** A cleaned display name is cut to this many characters. */
export const MAX_NAME_CHARS = 40;

/** Whether messages in this chat share one session between several people, and so carry sender tags. */
export function isSharedGroup(chatType: ChatType, groupMode: GroupSessionMode): boolean {
  return chatType === "group" && groupMode === "shared";
}

/**
 * A display name as a label may use it: NFKC-folded (fullwidth brackets become brackets), without `[`,
 * `]`, `#` and control or format characters, whitespace collapsed, at most {@link MAX_NAME_CHARS}.
 * Undefined when nothing is left.
 */
export function cleanName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const cleaned = name
    .normalize("NFKC")
    .replace(/[[\]#]|\p{C}/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const cut = Array.from(cleaned).slice(0, MAX_NAME_CHARS).join("").trim();
  return cut || undefined;
}

/**
 * The label of a sender in a session, given the labels already taken there by other people: the
 * cleaned name, or with ` #<hash of the user id>` when the name is taken or missing (`user #3f2a`).
 */
export function chooseLabel(
  name: string | undefined,
  platform: string,
  userId: string,
  taken: ReadonlySet<string>,
): string {
  const base = cleanName(name);
  if (base && !taken.has(base)) return base;
  const hash = createHash("sha256").update(`${platform}\u0000${userId}`).digest("hex");
  for (const length of [4, 8]) {
    const label = `${base ?? "user"} #${hash.slice(0, length)}`;
    if (!taken.has(label)) return label;
  }
  return `${base ?? "user"} #${hash}`;
}

/** The stored text of a user message from `label`: `[label] text` (`[label]` alone for no text). */
export function attribute(text: string, label: string): string {
  return text ? `[${label}] ${text}` : `[${label}]`;
}

/** A sender tag at the start of a stored message: a cleaned name, perhaps ` #<hex>`, in brackets. */
const LEADING_TAG = new RegExp(
  `^\\[[^\\[\\]#\\p{C}]{1,${MAX_NAME_CHARS}}(?: #[0-9a-f]{4,64})?\\](?=\\s|$)`,
  "u",
);

/**
 * The sender tag `content` starts with (`[Alice]`), or undefined. Meaningful only for user messages of a
 * shared group session: elsewhere a leading `[word]` is the user's own text.
 */
export function leadingTag(content: string): string | undefined {
  return LEADING_TAG.exec(content)?.[0];
}

/**
 * A search excerpt of a user message of a group session with the message's sender tag in front when
 * the excerpt starts mid-message (`…`) and so lost it: `[Alice] …the **weather** in Paris…`.
 */
export function withSenderTag(snippet: string, content: string): string {
  if (!snippet.startsWith("…")) return snippet;
  const tag = leadingTag(content);
  return tag ? `${tag} ${snippet}` : snippet;
}
