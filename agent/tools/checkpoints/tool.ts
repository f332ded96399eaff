/**
 * The side of checkpoints that runs where turns run: the snapshot before a turn's first change of its
 * workspace (`beforeChange`, handed to the agent loop) and the `checkpoint_restore` tool (toolset
 * "checkpoints": offered only where a toolset list names it).
 */
import { z } from "zod";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { TurnJob } from "../../../core/turn.js";
import { type BackendName, ownerOf, type WorkspaceManager } from "../../exec/index.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import type { CheckpointsSection } from "./settings.js";
import { CheckpointStores, checkpointsOff } from "./stores.js";

/** Turns remembered as already checkpointed (a turn's later calls skip the snapshot). */
const TURNS_KEPT = 512;

/** What checkpoints add where turns run. */
export interface Checkpointer {
  /** For `ToolRunDeps.beforeChange`: snapshots the turn's workspace once per turn. Never throws. */
  beforeChange(job: TurnJob, note: (line: string) => void): Promise<void>;
  /** `checkpoint_restore`, or none when checkpoints are off here. */
  tools: Tool[];
}

/** What the checkpointer is built on. */
export interface CheckpointerPorts {
  workspaces: WorkspaceManager;
  /** The configured execution backend's name. */
  backend: BackendName;
  homeDir: string;
  logger: Logger;
}

/** The first line of a turn's user text, as its checkpoint is labelled. */
export function turnLabel(job: TurnJob): string {
  if (job.resume) return "(a held call, resumed after its approval)";
  const line = job.input.text.trim().split("\n")[0]?.trim() ?? "";
  return line || (job.input.attachments?.length ? "(files)" : "(no text)");
}

/** Builds the checkpointer; with checkpoints off its `beforeChange` does nothing. */
export function createCheckpointer(section: CheckpointsSection, ports: CheckpointerPorts): Checkpointer {
  const off = checkpointsOff(section, ports.backend);
  if (off) return { beforeChange: async () => undefined, tools: [] };
  const stores = new CheckpointStores(ports.homeDir, section, ports.logger);
  const done = new Set<string>();
  const log = ports.logger.child({ component: "checkpoints" });
  return {
    async beforeChange(job, note) {
      if (done.has(job.turnId)) return;
      done.add(job.turnId);
      if (done.size > TURNS_KEPT) done.delete(done.values().next().value as string);
      const startedAt = performance.now();
      try {
        const workspace = await ports.workspaces.ensure(ownerOf(job.origin));
        const outcome = await stores.of(workspace).snapshot(turnLabel(job));
        const durationMs = Math.round(performance.now() - startedAt);
        if (outcome.kind === "too-large") {
          log.warn({ reason: outcome.reason }, "no checkpoint: workspace too large");
          note(`⚠️ No checkpoint before this change: ${outcome.reason} (checkpoints limits).`);
        } else log.debug({ kind: outcome.kind, durationMs }, "checkpoint");
      } catch (err) {
        log.warn({ error: describeError(err) }, "no checkpoint");
        note(`⚠️ No checkpoint before this change: ${describeError(err)}`);
      }
    },
    tools: [restoreTool(stores, ports.workspaces)],
  };
}

const parameters = z.object({
  checkpoint: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Which checkpoint: 1 (default) is the latest, taken before this turn's first change."),
});

function restoreTool(stores: CheckpointStores, workspaces: WorkspaceManager): Tool {
  return defineTool({
    name: "checkpoint_restore",
    description:
      "Restore the workspace to a checkpoint: files deleted since come back, files created since are removed, changed files get their old content. Checkpoint 1 is the state before this turn's first change; the state replaced is saved as a new checkpoint first.",
    parameters,
    toolset: "checkpoints",
    changesWorkspace: true,
    label: (args) => `checkpoint_restore ${args.checkpoint ?? 1}`,
    execute: async (args, ctx) => {
      const workspace = workspaces.workspaceFor(ownerOf(ctx.origin));
      const outcome = await stores.of(workspace).restore(args.checkpoint ?? 1, "before checkpoint_restore");
      const { restored } = outcome;
      return `Restored the workspace to checkpoint ${args.checkpoint ?? 1} ("${restored.label}").${outcome.saved ? " The state before is saved as checkpoint 1." : ""}`;
    },
  });
}
