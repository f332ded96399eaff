/**
 * The contracts of the workspace hand-over: what a generation of a workspace holds (its manifest), the
 * gateway's side as a worker reaches it (`HandoverRemote`), and where the gateway keeps the generation
 * numbers (`GenerationStore`, a table of `state.db`).
 */
import { z } from "zod";

/** A regular file of a workspace: its content is the blob named by its SHA-256. */
export interface FileEntry {
  readonly kind: "file";
  /** Lower-case hex SHA-256 of the content. */
  readonly sha256: string;
  readonly sizeBytes: number;
  /** Permission bits (`0o644`, `0o755`). */
  readonly mode: number;
}

/** A folder (carried so empty folders survive the hand-over). */
export interface DirEntry {
  readonly kind: "dir";
  readonly mode: number;
}

/** A symbolic link whose target stays inside the workspace (relative, never above its root). */
export interface LinkEntry {
  readonly kind: "link";
  readonly target: string;
}

/** One path of a workspace. */
export type ManifestEntry = FileEntry | DirEntry | LinkEntry;

/** A workspace as one generation holds it: workspace-relative `/`-separated path → entry. */
export type Manifest = Record<string, ManifestEntry>;

/** What a worker changed since the generation it last held: paths set, paths removed. */
export interface ManifestChanges {
  readonly set: Manifest;
  readonly removed: readonly string[];
}

/** The latest generation of a workspace at the gateway. Generation 0 is the empty workspace. */
export interface GenerationHead {
  readonly generation: number;
  /** Absent when the asker already holds this generation. */
  readonly manifest?: Manifest | undefined;
}

/** What a commit made. */
export interface CommitOutcome {
  readonly generation: number;
  /**
   * True when the commit was made on the generation the worker held (its workspace now equals the new
   * generation); false when another worker's commit came in between and the two were merged per path.
   */
  readonly fastForward: boolean;
}

/** The gateway's side of the hand-over, as a worker reaches it (`HttpHandoverRemote`). */
export interface HandoverRemote {
  /** The latest generation of `workspace`; its manifest unless `have` is that generation. */
  head(workspace: string, have?: number): Promise<GenerationHead>;
  /** Of `sha256s`, those the gateway does not hold yet. */
  missing(sha256s: readonly string[]): Promise<string[]>;
  /** Uploads blobs: each `read()` gives the content whose hash is `sha256`. */
  upload(blobs: readonly BlobSource[]): Promise<void>;
  /** Downloads blobs; `onBlob` is called once per blob, its hash already verified. */
  download(
    sha256s: readonly string[],
    onBlob: (sha256: string, data: Buffer) => Promise<void>,
  ): Promise<void>;
  /** Makes a new generation of `workspace` from `base` and `changes`. */
  commit(workspace: string, base: number, changes: ManifestChanges, worker: string): Promise<CommitOutcome>;
}

/** A blob to upload: its hash, size and a reader of its content. */
export interface BlobSource {
  readonly sha256: string;
  readonly sizeBytes: number;
  read(): Promise<Buffer>;
}

/** A generation as the gateway stores it. */
export interface StoredGeneration {
  readonly generation: number;
  readonly manifest: Manifest;
  readonly totalBytes: number;
}

/**
 * Where the gateway keeps each workspace's latest generation (`SqliteWorkspaceGenerations`). `update`
 * runs its function in one transaction, so two commits of one workspace never interleave.
 */
export interface GenerationStore {
  get(workspace: string): StoredGeneration | undefined;
  update(
    workspace: string,
    fn: (current: StoredGeneration | undefined) => StoredGeneration,
    pushedBy: string,
  ): StoredGeneration;
  /** Every blob hash some generation still names. */
  referencedBlobs(): Set<string>;
  /** Forgets generations not pushed since `before` (epoch ms); returns how many. */
  forgetOlderThan(before: number): number;
}

/** Lower-case hex SHA-256. */
export const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "must be a lower-case hex SHA-256");

const modeSchema = z.number().int().min(0).max(0o7777);

/** An entry as it travels (checked again by `checkManifest` for paths and links). */
export const manifestEntrySchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("file"),
    sha256: sha256Schema,
    sizeBytes: z.number().int().min(0),
    mode: modeSchema,
  }),
  z.object({ kind: z.literal("dir"), mode: modeSchema }),
  z.object({ kind: z.literal("link"), target: z.string().min(1).max(4096) }),
]);

/** A manifest as it travels. */
export const manifestSchema = z.record(z.string(), manifestEntrySchema);

/** A commit's body. */
export const commitSchema = z.object({
  base: z.number().int().min(0),
  worker: z.string().max(200).default("?"),
  set: manifestSchema,
  removed: z.array(z.string()).max(1_000_000),
});

/** A list of blob hashes (`missing`, `download`). */
export const blobListSchema = z.object({ sha256: z.array(sha256Schema).max(100_000) });
