/**
 * A turn's usage as its model calls add up: totals, and one line per model that answered (the turn's
 * own calls, compression, fallbacks, and the model calls tools made themselves).
 */
import type { ModelUsage, TurnUsage } from "../core/turn.js";
import type { ToolOutput } from "./types.js";

/** Adds one model call's tokens to the turn's totals and to its model's line. */
export function addUsage(
  usage: TurnUsage,
  model: string,
  u: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens?: number | undefined;
    cacheWriteTokens?: number | undefined;
    reasoningTokens?: number | undefined;
  },
): void {
  const cached = u.cachedTokens ?? 0;
  usage.promptTokens += u.promptTokens;
  usage.completionTokens += u.completionTokens;
  usage.cachedTokens = (usage.cachedTokens ?? 0) + cached;
  usage.modelCalls++;
  usage.byModel ??= [];
  const byModel = usage.byModel;
  let line: ModelUsage | undefined = byModel.find((m) => m.model === model);
  if (!line) {
    line = { model, promptTokens: 0, completionTokens: 0, cachedTokens: 0, calls: 0 };
    if (u.cacheWriteTokens !== undefined) line.cacheWriteTokens = 0;
    if (u.reasoningTokens !== undefined) line.reasoningTokens = 0;
    byModel.push(line);
  }
  line.promptTokens += u.promptTokens;
  line.completionTokens += u.completionTokens;
  line.cachedTokens += cached;
  if (u.cacheWriteTokens) line.cacheWriteTokens = (line.cacheWriteTokens ?? 0) + u.cacheWriteTokens;
  if (u.reasoningTokens) line.reasoningTokens = (line.reasoningTokens ?? 0) + u.reasoningTokens;
  line.calls++;
}

/** Adds the model calls tools made themselves (`ToolOutput.usage`) to the turn's lines per model. */
export function addToolUsage(usage: TurnUsage, outputs: readonly ToolOutput[]): void {
  for (const u of outputs.flatMap((o) => o.usage ?? [])) {
    usage.promptTokens += u.promptTokens;
    usage.completionTokens += u.completionTokens;
    usage.byModel ??= [];
    const line = usage.byModel.find((m) => m.model === u.model);
    if (!line) usage.byModel.push({ ...u });
    else {
      line.promptTokens += u.promptTokens;
      line.completionTokens += u.completionTokens;
      line.cachedTokens += u.cachedTokens;
      line.calls += u.calls;
    }
  }
}
