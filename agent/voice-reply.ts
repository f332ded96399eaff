/**
 * The spoken half of a reply: a chat with `/voice on` gets the reply's text also as a voice note, with
 * `/voice only` as the voice note alone. Added to the turn's result by the worker, so the note travels
 * in the same outbox item as the text and is delivered exactly once with it.
 */
import { describeError, isAbortError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { isSilent, type TurnJob, type TurnResult } from "../core/turn.js";
import type { OutboundFile } from "../core/types.js";

/** Synthesizes a reply for a platform; see `agent/tools/voice/reply.ts`. May throw (the reply then stays text). */
export type SpeakReply = (
  text: string,
  options: { platform: string; signal?: AbortSignal | undefined },
) => Promise<OutboundFile>;

/** Longer replies are not read out whole: the voice note says the first this many characters. */
const MAX_SPOKEN_CHARS = 4_000;

/**
 * Returns `result` with the spoken reply added when the job asks for one. A failed synthesis keeps the
 * text (in `only` mode with a line saying why there is no voice note); an abort rethrows.
 */
export async function addSpokenReply(
  result: TurnResult,
  job: TurnJob,
  speakReply: SpeakReply | undefined,
  signal: AbortSignal,
  log: Logger,
): Promise<TurnResult> {
  if (result.kind !== "ok" || !job.voiceReply || !speakReply || isSilent(result.reply)) return result;
  const text = speakable(result.reply.text);
  if (!text) return result;
  try {
    const file = await speakReply(text, { platform: job.origin.chat.platform, signal });
    const files = [...(result.reply.files ?? []), file];
    return { ...result, reply: { text: job.voiceReply === "only" ? "" : result.reply.text, files } };
  } catch (err) {
    if (signal.aborted || isAbortError(err)) throw err;
    log.warn({ err: describeError(err) }, "spoken reply failed");
    if (job.voiceReply === "also") return result;
    const note = `_(no voice note: ${describeError(err)})_`;
    return { ...result, reply: { ...result.reply, text: `${result.reply.text}\n\n${note}` } };
  }
}

/** The reply as it should sound: Markdown marks, code blocks and links' URLs left out. */
function speakable(markdown: string): string {
  const text = markdown
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`#>|~]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > MAX_SPOKEN_CHARS ? `${text.slice(0, MAX_SPOKEN_CHARS)}…` : text;
}
