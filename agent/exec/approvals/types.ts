import type { Redirect, Word } from "./shell-parse.js";

/** One way of reading a simple command: its command name and the words after it. */
export interface CommandView {
  /** Base name of the command word, lowercased: `/usr/bin/SUDO` → `sudo`. */
  name: string;
  /** The command word as parsed (its text as written, its expansions). */
  command: Word;
  /** The words after the command word, as text. */
  args: string[];
  /** The same words with their substitutions. */
  words: Word[];
  /** Redirections of the simple command (shared by the wrappers and what they wrap). */
  redirects: Redirect[];
  /** Every view of the commands before this one in its pipeline (what feeds its stdin). */
  upstream: CommandView[];
  /**
   * Where an earlier `cd` of the same command line moved: an absolute path, a path relative to the
   * starting directory, or `?` when unknowable (`cd`, `cd ~`, `cd $X`). Undefined: no `cd` before.
   */
  cwd?: string;
  /** The `NAME=value` words in front of the command (or alone on their command). */
  assignments?: string[];
}

/** What the rules know besides the command. */
export interface RuleContext {
  /** Absolute path of the workspace commands run in; relative paths are read from it. */
  workspaceDir?: string;
}

/**
 * One entry of the rule table. A rule tests the raw command line (`matchRaw`, for shapes a parser
 * would mangle such as fork bombs), each view of each simple command (`match`), or the views of the
 * whole line in order (`matchViews`, for what one command does to a later one). Tests are pure and
 * never throw.
 */
export interface DangerRule {
  /** Stable id, used by "/approve always" through `patternKey`. */
  id: string;
  /** One line for the person asked to approve. */
  description: string;
  matchRaw?: (command: string) => boolean;
  match?: (view: CommandView, context: RuleContext) => boolean;
  matchViews?: (views: readonly CommandView[], context: RuleContext) => boolean;
}

/** The rule a dangerous command matched, as shown to the approver. */
export interface MatchedRule {
  id: string;
  description: string;
}

/**
 * The verdict on one command line: the first rule it matched (what the approver reads first) and every
 * rule it matched (all must be granted for "always" to let it through).
 */
export type CommandClassification =
  | { dangerous: false }
  | { dangerous: true; rule: MatchedRule; rules: MatchedRule[] };
