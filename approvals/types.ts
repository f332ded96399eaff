import type { CommandView } from "./views.js";

/** What the rules know besides the command. */
export interface RuleContext {
  /** Absolute path of the workspace commands run in; relative paths are read from it. */
  workspaceDir?: string;
}

/**
 * One entry of the rule table. A rule tests either the raw command line (`matchRaw`, for shapes a
 * parser would mangle such as fork bombs) or each view of each simple command (`match`). Tests are
 * pure and never throw.
 */
export interface DangerRule {
  /** Stable id, used by "/approve always" through `patternKey`. */
  id: string;
  /** One line for the person asked to approve. */
  description: string;
  matchRaw?: (command: string) => boolean;
  match?: (view: CommandView, context: RuleContext) => boolean;
}

/** The rule a dangerous command matched, as shown to the approver. */
export interface MatchedRule {
  id: string;
  description: string;
}

/** The verdict on one command line. */
export type CommandClassification = { dangerous: false } | { dangerous: true; rule: MatchedRule };
