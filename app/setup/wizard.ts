/**
 * `herald setup`: the model, the platforms, the owner on each allowlist, the optional extras; then
 * `config.yaml` and `.env` are written together at the end (nothing before: Ctrl-C changes nothing),
 * and `herald doctor` runs. Re-running edits what is there and keeps everything else. The platforms'
 * steps and the optional ones are their modules' declarations (`setup`), in the order of their lists.
 */
import type { Prompter, SetupQuestions, StepContext } from "../../core/setup.js";
import { features } from "../features.js";
import { platformModules } from "../platforms.js";
import { openSetupFiles } from "./files.js";
import { modelStep } from "./model.js";

/** A module's setup questions under the name the wizard's choice gives it. */
export interface NamedQuestions {
  /** The platform's name, or the feature's key. */
  name: string;
  setup: SetupQuestions;
}

/** The platforms that have a setup step, in the platform list's order. */
export const platformQuestions: readonly NamedQuestions[] = platformModules.flatMap((m) =>
  m.setup ? [{ name: m.name, setup: m.setup }] : [],
);

/** The optional steps ("extras"): the features that have one, in the feature list's order. */
export const extraQuestions: readonly NamedQuestions[] = features.flatMap((f) =>
  f.setup ? [{ name: f.key, setup: f.setup }] : [],
);

const choices = (list: readonly NamedQuestions[]) =>
  list.map(({ name, setup }) => ({ value: name, label: setup.label, hint: setup.hint }));

/** Runs the step of each chosen module, in the order chosen. */
async function runSteps(ctx: StepContext, list: readonly NamedQuestions[], chosen: string[]): Promise<void> {
  for (const name of chosen) {
    const setup = list.find((q) => q.name === name)?.setup;
    if (!setup) continue;
    ctx.p.say("step", setup.label);
    await setup.step(ctx);
  }
}

export interface SetupOptions {
  homeDir: string;
  prompter: Prompter;
  /** Platforms already configured (pre-selected on a re-run). */
  configured?: string[];
  /** How long "send any message to your bot now" waits. @defaultValue 120_000 */
  ownerWaitMs?: number;
}

export interface SetupOutcome {
  written: boolean;
  configPath?: string;
  envPath?: string;
  changes: string[];
}

/**
 * Runs the wizard.
 * @throws SetupCancelled on Ctrl-C; CheckFailed when a non-interactive check fails. Files are untouched then.
 */
export async function runSetup(options: SetupOptions): Promise<SetupOutcome> {
  const { prompter: p } = options;
  const files = openSetupFiles(options.homeDir);
  const ctx: StepContext = { p, files, ownerWaitMs: options.ownerWaitMs ?? 120_000 };
  p.say(
    "info",
    `HERALD_HOME: ${options.homeDir}. Every step can be skipped; nothing is written until the end.`,
  );

  p.say("step", "Model");
  await modelStep(ctx);

  p.say("step", "Platforms");
  const platforms = await p.multiselect<string>({
    key: "platforms",
    message: "Which platforms should Herald answer on? (space toggles, enter confirms)",
    options: choices(platformQuestions),
    initial: options.configured ?? [],
  });
  await runSteps(ctx, platformQuestions, platforms);

  p.say("step", "Extras");
  const extras = await p.multiselect<string>({
    key: "extras",
    message: "Optional settings (space toggles, enter confirms; none is fine)",
    options: choices(extraQuestions),
    initial: [],
  });
  await runSteps(ctx, extraQuestions, extras);

  const changes = files.changes();
  if (!changes.length) {
    p.say("info", "Nothing changed; no file was written.");
    return { written: false, changes };
  }
  p.note(
    "To be saved",
    changes.map((c) => (/^[A-Z0-9_]+$/.test(c) ? `.env: ${c}` : `config.yaml: ${c}`)).join("\n"),
  );
  if (!(await p.confirm({ key: "write", message: "Write config.yaml and .env?", initial: true }))) {
    p.say("info", "Not written.");
    return { written: false, changes };
  }
  const { configPath, envPath } = files.commit();
  p.say("ok", `Wrote ${configPath} and ${envPath} (mode 0600).`);
  return { written: true, configPath, envPath, changes };
}
