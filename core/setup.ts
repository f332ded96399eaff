/**
 * The contracts of `herald setup` that modules declare into: the questions a step asks (a `Prompter`,
 * interactive on a terminal or answered from flags), the two files it edits, and a module's
 * `SetupQuestions` (its choice in the wizard, its flags, its step with the live check). The helpers a
 * step uses are in core/setup-steps.ts; the wizard itself is the composition root's.
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

/** The two files `herald setup` edits, held in memory until the end (app/setup/files.ts). */
export interface SetupFiles {
  /** A config.yaml value (snake_case path), as the file has it now (edits included). */
  get(path: string): unknown;
  set(path: string, value: unknown): void;
  /** Adds values to a list at `path`, keeping what is there. */
  addToList(path: string, values: string[]): void;
  /** A .env value (the file's, edits included). */
  env(name: string): string | undefined;
  setEnv(name: string, value: string): void;
  /** What changes on commit: config paths and env names (never values). */
  changes(): string[];
  /** Writes both files (temp + rename). */
  commit(): { configPath: string; envPath: string };
}

/** What every step of the wizard shares: the prompter, the files, and how long owner waits last. */
export interface StepContext {
  p: Prompter;
  files: SetupFiles;
  /** How long "send any message to your bot now" waits. @defaultValue 120_000 */
  ownerWaitMs: number;
}

/** The answers of a non-interactive run, by question key: from flags, then environment variables. */
export type Answers = Record<string, string | string[] | boolean | undefined>;

/** One flag of `herald setup`; it answers one question of a step when the run is non-interactive. */
export interface SetupFlag {
  /** As commander takes it: `--telegram-token <token>`, or a switch such as `--whatsapp`. */
  readonly flag: string;
  /** The key of the question it answers. */
  readonly key: string;
  /** The environment variable read when the flag is absent. */
  readonly env?: string;
  /** Its line in `herald setup --help`. */
  readonly help?: string;
  /** What a switch answers. @defaultValue true */
  readonly value?: string;
}

/** A module's part of `herald setup`: its choice in the wizard, its flags, its step. */
export interface SetupQuestions {
  /** The choice's label (also the step's heading) and hint. */
  readonly label: string;
  readonly hint: string;
  /** A non-interactive run sets the module up when this question has an answer (its token, its address). */
  readonly chosenBy: string;
  readonly flags: readonly SetupFlag[];
  /**
   * Asks, checks each credential live, and records what passed in `ctx.files`.
   * @throws SetupCancelled on Ctrl-C; CheckFailed when a non-interactive check fails
   */
  step(ctx: StepContext): Promise<void>;
  /** Non-interactive: fills answers that others imply (an owner id given means "type it" was chosen). */
  imply?(answers: Answers): void;
}
