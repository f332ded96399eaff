/**
 * Contracts of `herald setup`: the questions it asks (a `Prompter`, interactive on a terminal or
 * answered from flags), and what each live check found.
 */

/** One choice of a select. */
export interface Choice<T> {
  value: T;
  label: string;
  hint?: string | undefined;
}

/**
 * How the wizard asks. `key` names the answer for the non-interactive prompter (a flag or env variable
 * maps to it). An interactive prompter throws `SetupCancelled` on Ctrl-C; a skipped question answers
 * `undefined` (text) or the `initial` value.
 */
export interface Prompter {
  /** Whether someone answers (false: flags only, and a failed check ends the run). */
  readonly interactive: boolean;
  /**
   * A line of text. `advanced` questions (API roots for self-hosted or test servers) are not asked
   * interactively: they answer `initial`, or the flag given.
   */
  text(q: {
    key: string;
    message: string;
    initial?: string | undefined;
    placeholder?: string;
    advanced?: boolean;
  }): Promise<string | undefined>;
  /** A secret; an empty answer keeps `hasCurrent` (returns undefined). */
  password(q: { key: string; message: string; hasCurrent?: boolean }): Promise<string | undefined>;
  confirm(q: { key: string; message: string; initial?: boolean }): Promise<boolean>;
  select<T extends string>(q: {
    key: string;
    message: string;
    options: Choice<T>[];
    initial?: T;
  }): Promise<T>;
  multiselect<T extends string>(q: {
    key: string;
    message: string;
    options: Choice<T>[];
    initial?: T[];
  }): Promise<T[]>;
  /** Prints a line: `info`, `ok` (a check passed), `warn`, `error`, or a boxed `note`. */
  say(kind: "info" | "ok" | "warn" | "error" | "step", text: string): void;
  note(title: string, text: string): void;
  /** A running check: `start`, then `stop` with what it found. */
  spinner(): { start(text: string): void; stop(text: string): void; fail(text: string): void };
}

/** Ctrl-C (or Escape) in the wizard: nothing is written. */
export class SetupCancelled extends Error {
  constructor() {
    super("Setup cancelled; no file was changed.");
    this.name = "SetupCancelled";
  }
}

/** A live credential check failed; `message` says what was wrong and how to fix it. */
export class CheckFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckFailed";
  }
}
