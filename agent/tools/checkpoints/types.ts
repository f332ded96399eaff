/** The contracts of checkpoints: their bounds, what a checkpoint is, and what taking one did. */

/** How much a checkpoint holds, and how many are kept. */
export interface CheckpointLimits {
  /** Checkpoints kept per workspace; the oldest go first. */
  readonly maxCount: number;
  /** Files larger than this are left out of a checkpoint (and never deleted by a rollback). */
  readonly maxFileBytes: number;
  /** A workspace whose other files add up to more than this gets no checkpoint. */
  readonly maxTotalBytes: number;
  /** A workspace with more files than this gets no checkpoint. */
  readonly maxFiles: number;
}

/**
 * Defaults of `CheckpointLimits`: 20 checkpoints, files up to 10 MiB, 500 MiB and 20,000 files in
 * all.
 */
export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = {
  maxCount: 20,
  maxFileBytes: 10 * 1024 * 1024,
  maxTotalBytes: 500 * 1024 * 1024,
  maxFiles: 20_000,
};

/** One stored checkpoint. `n` counts from 1, the latest. */
export interface CheckpointInfo {
  readonly n: number;
  /** The commit in the shadow repository. */
  readonly commit: string;
  readonly tree: string;
  /** When it was taken, epoch ms. */
  readonly takenAt: number;
  /** What it is labelled with: the first line of its turn's user text. */
  readonly label: string;
}

/** What asking for a checkpoint did. */
export type SnapshotOutcome =
  | {
      readonly kind: "taken";
      readonly checkpoint: CheckpointInfo;
      readonly skipped: readonly string[];
      readonly skippedCount: number;
    }
  | { readonly kind: "unchanged"; readonly checkpoint: CheckpointInfo }
  | { readonly kind: "too-large"; readonly reason: string };
