/**
 * Checkpoints on the gateway: `/checkpoints` (the list), `/diff [n]` (what changed since checkpoint n:
 * the stat summary and the unified diff, cut at a cap that the reply names), `/rollback [n]` (restore
 * it, no approval asked). The commands act on the workspace of the sender in this chat, the one the
 * turns use. `/diff` and `/rollback` are for owners and for whoever the workspace belongs to alone (a
 * DM, a per-user group session, per-user workspaces); in a shared group or thread only owners may, and
 * not while a turn of the session runs.
 */
import { agentOfKey } from "../../../core/chat.js";
import type { Command, CommandContext, CommandModule, CommandResult } from "../../../core/commands.js";
import { describeError, HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import { ownerOf } from "../../exec/attachments.js";
import type { BackendName } from "../../exec/types.js";
import { WorkspaceManager, type WorkspaceRootSettings, workspaceRoots } from "../../exec/workspaces.js";
import type { CheckpointsSection } from "./settings.js";
import { CheckpointStores, checkpointsOff } from "./stores.js";
import type { CheckpointInfo } from "./types.js";

/** Characters of unified diff `/diff` shows; the reply is split into the platform's messages. */
export const DIFF_MAX_CHARS = 12_000;

/** What checkpoints need of the gateway (`GatewayRunner` has this shape). */
export interface CheckpointsGateway {
  commands: { add(module: CommandModule): unknown };
  control: { openTurns(sessionKey: string): readonly unknown[] };
}

/** The settings the commands read. */
export interface CheckpointsConfig extends WorkspaceRootSettings {
  /** The further agents: a turn's agent (its session key's) may have its own backend. */
  agents: readonly {
    name: string;
    workspaceRoot?: string | undefined;
    execBackend?: BackendName | undefined;
  }[];
  checkpoints: CheckpointsSection;
  exec: { backend: BackendName; workspaceScope: "session" | "user" };
}

/** Registers `/checkpoints`, `/diff` and `/rollback` on the gateway. */
export function createCheckpoints(
  config: CheckpointsConfig,
  ports: { gateway: CheckpointsGateway; logger: Logger },
): void {
  ports.gateway.commands.add(checkpointCommands(config, ports));
}

/** How long ago `at` was, in the largest whole unit. */
export function ago(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** The list as `/checkpoints` shows it. */
export function formatList(list: readonly CheckpointInfo[], now: number): string {
  if (list.length === 0) return "No checkpoints yet: one is taken before a turn first changes the workspace.";
  const lines = list.map((c) => `${c.n}. ${ago(c.takenAt, now)} — ${c.label}`);
  return `⏱ Checkpoints of this workspace, newest first:\n${lines.join("\n")}\n\n/diff n shows what changed since one, /rollback n restores it.`;
}

/** `n` out of a command's arguments (default 1), or the message saying what to type. */
function parseN(args: string, name: string): number | string {
  if (!args) return 1;
  const n = Number(args);
  if (Number.isInteger(n) && n >= 1) return n;
  return `Usage: /${name} [n], where n is a checkpoint's number in /checkpoints (1 is the latest).`;
}

function checkpointCommands(
  config: CheckpointsConfig,
  ports: { gateway: CheckpointsGateway; logger: Logger },
): CommandModule {
  const backends = new Map(config.agents.map((a) => [a.name, a.execBackend ?? config.exec.backend]));
  const offFor = (ctx: CommandContext) => {
    const agent = agentOfKey(ctx.sessionKey);
    return checkpointsOff(config.checkpoints, (agent && backends.get(agent)) || config.exec.backend);
  };
  const log = ports.logger.child({ component: "checkpoints" });
  const stores = new CheckpointStores(config.homeDir, config.checkpoints, log);
  const workspaces = new WorkspaceManager({ ...workspaceRoots(config), scope: config.exec.workspaceScope });
  const storeOf = (ctx: CommandContext) =>
    stores.of(
      workspaces.workspaceFor(
        ownerOf({ sessionKey: ctx.sessionKey, chat: ctx.message.chat, userId: ctx.message.sender.id }),
      ),
    );
  const refusal = (ctx: CommandContext, name: string): string | undefined => {
    const off = offFor(ctx);
    if (off) return off;
    if (!mayChange(ctx, config.exec.workspaceScope))
      return `Only an owner may use /${name} on this chat's shared workspace.`;
    return undefined;
  };
  const failed = (err: unknown, what: string): string => {
    if (err instanceof HeraldError && (err.code === "not_found" || err.code === "invalid_input"))
      return `${err.message}.`;
    log.warn({ error: describeError(err) }, `${what} failed`);
    return `The ${what} failed: ${describeError(err)}`;
  };
  const list: Command = {
    description: "list the workspace's checkpoints (one before each turn that changed it)",
    run: (ctx) => offFor(ctx) ?? formatList(storeOf(ctx).list(), ctx.now),
  };
  const diff: Command = {
    description: "show what changed in the workspace since checkpoint n (default the latest)",
    run: (ctx): CommandResult => {
      const n = parseN(ctx.args, "diff");
      const refused = refusal(ctx, "diff");
      if (refused || typeof n === "string") return refused ?? (n as string);
      const store = storeOf(ctx);
      return {
        notice: `🔍 Comparing the workspace with checkpoint ${n}…`,
        answer: () =>
          store.diff(n, DIFF_MAX_CHARS).then(
            (d) => formatDiff(d, n),
            (err: unknown) => failed(err, "diff"),
          ),
      };
    },
  };
  const rollback: Command = {
    description: "restore the workspace to checkpoint n (default the latest)",
    run: (ctx): CommandResult => {
      const n = parseN(ctx.args, "rollback");
      const refused = refusal(ctx, "rollback");
      if (refused || typeof n === "string") return refused ?? (n as string);
      if (ports.gateway.control.openTurns(ctx.sessionKey).length > 0)
        return "A turn is running; /stop it first, then try again.";
      const store = storeOf(ctx);
      return {
        notice: `⏪ Rolling the workspace back to checkpoint ${n}…`,
        answer: () =>
          store.restore(n).then(
            ({ restored, saved }) =>
              `⏪ The workspace is back at checkpoint ${n} (${ago(restored.takenAt, Date.now())}: ${restored.label}).${saved ? " What it held before is saved as checkpoint 1: /rollback 1 undoes this." : ""}`,
            (err: unknown) => failed(err, "rollback"),
          ),
      };
    },
  };
  return { commands: { checkpoints: list, diff, rollback } };
}

/** Whether the sender may diff and roll back this chat's workspace. */
function mayChange(ctx: CommandContext, scope: "session" | "user"): boolean {
  if (ctx.isOwner || scope === "user" || ctx.message.chatType === "dm") return true;
  return ctx.sessionKey.endsWith(`:u:${ctx.message.sender.id}`);
}

/** `/diff`'s reply: the summary, then the diff in a code block, and what was left out. */
function formatDiff(
  d: { stat: string; patch: string; cut: boolean; checkpoint: CheckpointInfo },
  n: number,
): string {
  const head = `🔍 Changes since checkpoint ${n} (${d.checkpoint.label}):`;
  if (!d.stat) return `${head} none.`;
  const patch = d.cut ? d.patch.slice(0, d.patch.lastIndexOf("\n") + 1) : d.patch;
  const tail = d.cut
    ? `\n\n✂️ The diff is longer than ${DIFF_MAX_CHARS} characters and was cut here; read the files themselves for the rest.`
    : "";
  return `${head}\n\`\`\`\n${d.stat}\n\`\`\`\n\`\`\`diff\n${patch.trimEnd()}\n\`\`\`${tail}`;
}
