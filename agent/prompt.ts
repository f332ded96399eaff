/**
 * The default system prompt: persona, where the reply goes and how it renders, and the date. Pure and
 * deterministic: the same inputs give the same bytes (providers cache identical prompt prefixes), and
 * the time is stated to the hour only so the prompt stays the same for an hour.
 */
import { isUtcZone } from "../core/time-zone.js";
import type { ChatType, PlatformName } from "../core/types.js";

export const DEFAULT_PERSONA =
  "You are Herald, a helpful assistant that talks with people in their chat apps. Be direct and concise, say so when you are unsure, and use your tools when they help rather than guessing.";

/**
 * How the gateway's own channels show a reply. Platforms bring their hint in their module (passed as
 * `platformHint`); anything else gets a neutral Markdown hint.
 */
const CHANNEL_HINTS: Record<string, string> = {
  api: "You are replying through an API; answer in Markdown.",
  cli: "You are replying in a terminal; Markdown is shown as plain text, so keep formatting light.",
  cron: "This is a scheduled task; your reply is delivered to a chat as a report, so make it stand alone.",
};

export interface SystemPromptOptions {
  /** Replaces the default persona. */
  persona?: string | undefined;
  platform: PlatformName;
  /** How replies render on this platform (its module's `promptHint`). */
  platformHint?: string | undefined;
  chatType: ChatType;
  /** The person talking (DMs, per-user group sessions); ignored with `senderTags`. */
  userName?: string | undefined;
  /**
   * A group session several people share: each user message starts with its sender's tag
   * (`core/speakers.ts`), and the prompt names nobody, so it is the same whoever speaks.
   */
  senderTags?: boolean | undefined;
  /** Epoch ms. */
  now: number;
  /** IANA time zone the date is stated in. */
  timezone: string;
  /** Further sections (memory snapshot, skills index), in order. */
  extra?: readonly string[] | undefined;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * `text`, stored one byte per character when it is plain ASCII. V8 keeps a piece cut from a text that
 * had any other character (a SKILL.md with an arrow in it, a config file with an accent) at two bytes
 * per character, and so everything built from it: the system prompt, then every request body built
 * around it (twice the memory, and an encode instead of a copy on every model call).
 */
export function compactAscii(text: string): string {
  return ASCII.test(text) ? Buffer.from(text, "latin1").toString("latin1") : text;
}

/** How a shared group session's prompt explains sender tags (the same bytes for every speaker). */
export const SENDER_TAGS_NOTE =
  "This is a group chat where several people share one conversation. Each person's message starts with their name in square brackets, added by the system, like [Sam] (a # and a code after a name tell apart two people with the same name). Only that first tag says who wrote the message; a bracketed name later in it is part of what they typed. A message without a tag is a note from the system, not from a person. Address the person who asked, and keep track of who said what.";

/** Builds the system prompt; the same inputs give the same text. */
export function buildSystemPrompt(options: SystemPromptOptions): string {
  const { platform, chatType, userName } = options;
  const hint =
    options.platformHint ?? CHANNEL_HINTS[platform] ?? `You are replying in ${platform}; answer in Markdown.`;
  const who =
    chatType === "group"
      ? options.senderTags
        ? SENDER_TAGS_NOTE
        : `This is a group chat with several people${userName ? `; the message is from ${userName}` : ""}. Address the person who asked.`
      : userName
        ? `You are talking with ${userName}.`
        : "";
  const sections = [
    options.persona?.trim() || DEFAULT_PERSONA,
    [hint, who].filter(Boolean).join(" "),
    describeNow(options.now, options.timezone),
    ...(options.extra ?? []).map((s) => s.trim()).filter(Boolean),
  ];
  return sections.join("\n\n");
}

// Building an Intl.DateTimeFormat costs far more than using one: keep one per zone.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-GB", {
      timeZone: timezone,
      weekday: "long",
      day: "numeric",
      month: "long",
      year: "numeric",
      hour: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** "It is Tuesday, 4 June 2024, between 14:00 and 15:00 (Europe/Berlin)." */
// Every zone's offset is a multiple of 15 minutes, so the local hour is the same within a quarter hour.
const QUARTER_HOUR_MS = 15 * 60_000;
let lastNow = { key: "", text: "" };

export function describeNow(now: number, timezone: string): string {
  const key = `${timezone}|${Math.floor(now / QUARTER_HOUR_MS)}`;
  if (lastNow.key !== key) lastNow = { key, text: formatNow(now, timezone) };
  return lastNow.text;
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

function formatNow(now: number, timezone: string): string {
  const pad = (h: number) => `${String(h % 24).padStart(2, "0")}:00`;
  if (isUtcZone(timezone)) {
    // What the formatter below says for UTC, without building one (see core/time-zone.ts).
    const d = new Date(now);
    const hour = d.getUTCHours();
    return `It is ${WEEKDAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, between ${pad(hour)} and ${pad(hour + 1)} (${timezone}).`;
  }
  const parts = formatterFor(timezone).formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const hour = Number(get("hour"));
  return `It is ${get("weekday")}, ${get("day")} ${get("month")} ${get("year")}, between ${pad(hour)} and ${pad(hour + 1)} (${timezone}).`;
}
