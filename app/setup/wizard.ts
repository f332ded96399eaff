/**
 * `herald setup`: the model, the platforms, the owner on each allowlist, the optional extras; then
 * `config.yaml` and `.env` are written together at the end (nothing before: Ctrl-C changes nothing),
 * and `herald doctor` runs. Re-running edits what is there and keeps everything else.
 */
import { EXTRA_CHOICES, type ExtraName, extraSteps } from "./extras.js";
import { openSetupFiles } from "./files.js";
import { modelStep } from "./model.js";
import { PLATFORM_CHOICES, type PlatformName, platformSteps } from "./platforms.js";
import type { StepContext } from "./step.js";
import type { Prompter } from "./types.js";

export interface SetupOptions {
  homeDir: string;
  prompter: Prompter;
  /** Platforms already configured (pre-selected on a re-run). */
  configured?: PlatformName[];
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
  const platforms = await p.multiselect<PlatformName>({
    key: "platforms",
    message: "Which platforms should Herald answer on? (space toggles, enter confirms)",
    options: PLATFORM_CHOICES,
    initial: options.configured ?? [],
  });
  await platformSteps(ctx, platforms);

  p.say("step", "Extras");
  const extras = await p.multiselect<ExtraName>({
    key: "extras",
    message: "Optional settings (space toggles, enter confirms; none is fine)",
    options: EXTRA_CHOICES,
    initial: [],
  });
  await extraSteps(ctx, extras);

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
