/** What the search takes and returns. */
import type { SpawnedProcess, SpawnRequest } from "../../../exec/index.js";

/** Which program searches: ripgrep when it is installed where commands run, else find and grep. */
export type SearchEngine = "auto" | "ripgrep" | "grep";

/** One search, with its path already checked. */
export interface SearchRequest {
  /** Workspace-relative directory or file to search ("." for the root). */
  searchPath: string;
  mode: "names" | "content";
  /** Content mode: the regular expression. */
  regex?: string;
  ignoreCase: boolean;
  /** A base-name glob (no `/`) narrowing the files; both engines apply it the same way. */
  nameGlob?: string;
  /** Further filter on the workspace-relative path; only accepted files count. */
  accept: (relPath: string) => boolean;
  /** Stop once this many hits are collected. */
  maxHits: number;
  engine: SearchEngine;
  /** Starts the search command in the workspace (the backend's spawn). */
  spawn: (request: SpawnRequest) => SpawnedProcess;
  /** The longest the search may run, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A file (names mode) or a matching line (content mode). */
export interface SearchHit {
  /** Path relative to the workspace root, `/`-separated. */
  path: string;
  line?: number;
  /** Content mode: the line as shown (`hitText`: cut at 300 characters, with a marker). */
  text?: string;
}

/** Hits, and whether the search stopped at `maxHits` (or its time) before the end. */
export interface SearchOutcome {
  hits: SearchHit[];
  complete: boolean;
}
