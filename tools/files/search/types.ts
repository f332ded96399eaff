/** What the two search backends (ripgrep and the JS walk) take and return. */

/** One search, with paths already resolved. */
export interface SearchRequest {
  /** Absolute workspace root; hit paths are relative to it. */
  root: string;
  /** Absolute directory or file to search. */
  searchPath: string;
  mode: "names" | "content";
  /** Content mode: the regular expression. */
  regex?: string;
  ignoreCase: boolean;
  /** A base-name glob (no `/`) narrowing the files; both backends apply it the same way. */
  nameGlob?: string;
  /** Further filter on the root-relative path; only accepted files count. */
  accept: (relPath: string) => boolean;
  /** Stop once this many hits are collected. */
  maxHits: number;
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

/** Hits, and whether the backend stopped at `maxHits` before the end. */
export interface SearchOutcome {
  hits: SearchHit[];
  complete: boolean;
}
