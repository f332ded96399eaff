/**
 * The toolsets of a job's runs: at most those a turn of its maker's chat gets (`ToolsetLimit`). A job
 * naming another is refused when made or changed; each run is limited again (a job saved before, or by
 * an older Herald, loses the others). A job added on the command line has no origin: it is the owner's
 * and gets what it names.
 */
import { HeraldError } from "../core/errors.js";
import type { CronJobSpec, JobMaker, ToolsetLimit } from "./types.js";

function makerOf(spec: CronJobSpec): JobMaker | undefined {
  if (!spec.origin) return undefined;
  return { chat: spec.origin, userId: spec.createdBy ?? "", chatType: spec.originChatType };
}

/**
 * Throws unless every toolset `spec` names is one its maker's chat gets.
 * @throws HeraldError `unauthorized` naming the toolsets to leave out and the chat's own.
 */
export function checkJobToolsets(spec: CronJobSpec, limit: ToolsetLimit | undefined): void {
  const maker = makerOf(spec);
  if (!limit || !maker || !spec.toolsets) return;
  const allowed = limit(maker);
  const denied = spec.toolsets.filter((t) => !allowed.includes(t));
  if (denied.length === 0) return;
  const s = denied.length > 1 ? "s" : "";
  throw new HeraldError(
    `this chat's turns don't get the toolset${s} ${denied.join(", ")}, so its jobs can't either: a job's runs get at most the toolsets of the chat that made it (here: ${allowed.join(", ") || "none"}). Leave ${denied.join(", ")} out of toolsets.`,
    { code: "unauthorized" },
  );
}

/** A run's toolsets: `asked` (the job's, or the defaults) less those its maker's chat does not get. */
export function runToolsets(
  spec: CronJobSpec,
  asked: readonly string[],
  limit: ToolsetLimit | undefined,
): { toolsets: string[]; dropped: string[] } {
  const maker = makerOf(spec);
  if (!limit || !maker) return { toolsets: [...asked], dropped: [] };
  const allowed = limit(maker);
  return {
    toolsets: asked.filter((t) => allowed.includes(t)),
    dropped: asked.filter((t) => !allowed.includes(t)),
  };
}
