/**
 * What a turn's result writes, inside the commit transaction: the turn's final status, a compaction,
 * the turn's messages, and the reply (or error) in the outbox for each delivery target. Returns the
 * outbox items to deliver once committed, or undefined when the result is stale (the turn was already
 * final: cancelled, or answered by an earlier attempt).
 */
import { formatChat } from "../core/chat.js";
import type { Logger } from "../core/logger.js";
import { isSilent, type TurnRecord, type TurnResult } from "../core/turn.js";
import type { ChatRef, KeyValueStore } from "../core/types.js";
import type { OutboxItem } from "../sessions/types.js";
import type { RunnerState } from "./types.js";

/** Where a turn's reply goes: its cron job's targets, or its own chat. */
export function replyTargets(turn: TurnRecord): ChatRef[] {
  return turn.cron ? turn.cron.targets.map((t) => t.chat) : [turn.chat];
}

/** Records `result` for `turn`; see the file comment. */
export function recordResult(
  state: Pick<RunnerState, "turns" | "sessions" | "outbox" | "usage">,
  turn: TurnRecord,
  result: TurnResult,
  options: { now: number; engaged: KeyValueStore; log: Logger },
): OutboxItem[] | undefined {
  const { now } = options;
  const ok = result.kind === "ok";
  if (!state.turns.finish(turn.id, ok ? "done" : "failed", ok ? undefined : result.error, now))
    return undefined;
  if (result.kind === "ok" && result.compaction) {
    state.sessions.compact(turn.sessionId, result.compaction.uptoSeq, result.compaction.summary);
  }
  if (result.messages.length)
    state.sessions.append(turn.sessionId, result.messages, { turnId: turn.id, now });
  const usage = result.usage;
  if (state.usage && usage?.modelCalls) {
    // A worker of an older build reports totals only: one line for the model that answered.
    const lines = usage.byModel ?? [
      {
        model: result.kind === "ok" ? result.model : "unknown",
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        cachedTokens: usage.cachedTokens ?? 0,
        calls: usage.modelCalls,
      },
    ];
    state.usage.record(turn, lines, now);
  }
  const replyToId = turn.inbound ? (turn.inbound.replyToId ?? turn.inbound.messageId) : undefined;
  const items: OutboxItem[] = [];
  if (result.kind === "ok") {
    if (!isSilent(result.reply) || result.reply.clientCalls) {
      for (const target of replyTargets(turn)) {
        const same = formatChat(target) === formatChat(turn.chat);
        const message = {
          text: (turn.options?.replyPrefix ?? "") + result.reply.text,
          files: result.reply.files,
          replyToId: same ? replyToId : undefined,
          inboundMeta: same ? turn.inbound?.meta : undefined,
          subject: turn.cron?.subject,
          buttons: result.reply.buttons,
          ...(result.reply.clientCalls ? { clientCalls: result.reply.clientCalls } : {}),
        };
        items.push(state.outbox.add(target, message, turn.id, now));
      }
    }
    if (turn.chat.threadId) options.engaged.set(turn.sessionKey, String(now));
    return items;
  }
  options.log.warn({ turnId: turn.id, error: result.error }, "turn failed");
  // A scheduled run's failure is the cron service's to report (to the job's origin, once per streak).
  if (!turn.cron) {
    const message = {
      text: result.userMessage,
      kind: "error" as const,
      failure: { code: result.code, retryAfterMs: result.retryAfterMs },
      replyToId,
      inboundMeta: turn.inbound?.meta,
    };
    items.push(state.outbox.add(turn.chat, message, turn.id, now));
  }
  return items;
}
