/**
 * `herald setup`: the wizard of `app/setup/` wired into the CLI. Interactive on a terminal (@clack/prompts);
 * `--non-interactive` answers every question from flags, falling back to the usual environment
 * variables (OPENAI_API_KEY, each platform's token, …) so scripts and containers can run it too. The
 * flags are the model's (here) and those each platform and feature declares with its setup step.
 */
import type { Command } from "commander";
import { type Answers, CheckFailed, SetupCancelled, type SetupFlag } from "../../core/setup.js";
import { configuredPlatforms, loadConfig, resolveHome } from "../config.js";
import { printDoctor, runDoctor } from "../doctor.js";
import { createClackPrompter } from "../setup/clack-prompter.js";
import { createFlagsPrompter } from "../setup/flags-prompter.js";
import { VENDORS, type Vendor, type VendorName } from "../setup/vendors.js";
import { extraQuestions, type NamedQuestions, platformQuestions, runSetup } from "../setup/wizard.js";
import { cliAction } from "./action.js";

type Flags = Record<string, string | boolean | undefined>;

/** The model step's flags (the kernel's); each platform and feature declares its own in its `setup`. */
const MODEL_FLAGS: SetupFlag[] = [
  {
    flag: "--model-provider <name>",
    key: "model.provider",
    help: "openai, openrouter, ollama, anthropic, gemini, bedrock or other",
  },
  {
    flag: "--model-url <url>",
    key: "model.url",
    env: "OPENAI_BASE_URL",
    help: "the OpenAI-compatible base URL (env OPENAI_BASE_URL)",
  },
  {
    flag: "--model-key <key>",
    key: "model.key",
    env: "OPENAI_API_KEY",
    help: "its API key (env OPENAI_API_KEY; ANTHROPIC_API_KEY or GEMINI_API_KEY for those providers)",
  },
  {
    flag: "--model-region <region>",
    key: "model.region",
    env: "AWS_REGION",
    help: "Bedrock's AWS region (env AWS_REGION)",
  },
  {
    flag: "--model <name>",
    key: "model.name",
    env: "HERALD_MODEL",
    help: "the model (env HERALD_MODEL; default: the current or the first listed)",
  },
];

/** Every flag that answers a question: the model's, then each platform's and each feature's. */
const setupFlags = (): SetupFlag[] => [
  ...MODEL_FLAGS,
  ...[...platformQuestions, ...extraQuestions].flatMap((q) => q.setup.flags),
];

/** The property commander gives a flag's value: `--telegram-api-root <url>` → `telegramApiRoot`. */
function attributeOf(flag: string): string {
  const long = flag.split(/[ ,]+/).find((part) => part.startsWith("--")) ?? flag;
  return long.slice(2).replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The modules a non-interactive run sets up: those whose `chosenBy` question has an answer. */
const chosen = (list: readonly NamedQuestions[], answers: Answers) =>
  list.filter((q) => answers[q.setup.chosenBy] !== undefined).map((q) => q.name);

/** The answers of a non-interactive run: flags first, then the environment. */
export function answersFrom(flags: Flags, env: NodeJS.ProcessEnv): Answers {
  const answers: Answers = {};
  for (const { flag, key, env: envName, value: switchValue } of setupFlags()) {
    const given = flags[attributeOf(flag)];
    const value =
      given === true && switchValue !== undefined
        ? switchValue
        : (given ?? (envName ? env[envName] : undefined));
    if (value !== undefined && value !== "") answers[key] = value;
  }
  if (answers["model.url"] || answers["model.key"])
    answers["model.provider"] ??= answers["model.url"] ? "other" : "openai";
  const vendor = VENDORS[answers["model.provider"] as VendorName] as Vendor | undefined;
  // A vendor's key comes from the flag, else from the vendor's own variable, never OPENAI_API_KEY.
  if (vendor) answers["model.key"] = flags["modelKey"] ?? (vendor.keyEnv ? env[vendor.keyEnv] : undefined);
  for (const q of [...platformQuestions, ...extraQuestions]) q.setup.imply?.(answers);
  answers["platforms"] =
    typeof flags["platforms"] === "string"
      ? flags["platforms"].split(",")
      : chosen(platformQuestions, answers);
  answers["extras"] = chosen(extraQuestions, answers);
  answers["write"] = true;
  return answers;
}

function configured(): string[] {
  try {
    return configuredPlatforms(loadConfig()).map((m) => m.name);
  } catch {
    return [];
  }
}

/** Adds `herald setup` to the program. */
export function registerSetupCommand(program: Command): void {
  const cmd = program
    .command("setup")
    .description(
      "configure the model and the platforms, each credential checked live; writes config.yaml and .env",
    )
    .option(
      "--non-interactive",
      "answer from flags and environment variables; a failed check exits 1 and writes nothing",
    )
    .option("--skip-doctor", "do not run `herald doctor` at the end")
    .option("--owner-wait <seconds>", "how long to wait for your message to the Telegram bot", "120")
    .option(
      "--platforms <list>",
      "non-interactive: the platforms to set up (default: those with a token given)",
    );
  for (const { flag, help } of setupFlags()) cmd.option(flag, help);
  cmd.action(
    cliAction(async (flags: Flags) => {
      const homeDir = resolveHome();
      const interactive = !flags["nonInteractive"];
      if (interactive && !process.stdin.isTTY) {
        throw new Error(
          "herald setup asks questions on a terminal; for scripts use `herald setup --non-interactive` with flags.",
        );
      }
      const ownerWaitMs = Number(flags["ownerWait"]) * 1000;
      if (!(ownerWaitMs > 0))
        throw new Error("--owner-wait must be a number of seconds, e.g. --owner-wait 60.");
      const prompter = interactive
        ? createClackPrompter()
        : createFlagsPrompter(answersFrom(flags, process.env));
      const clack = interactive ? await import("@clack/prompts") : undefined;
      clack?.intro("Herald setup");
      try {
        const outcome = await runSetup({ homeDir, prompter, configured: configured(), ownerWaitMs });
        if (outcome.written && !flags["skipDoctor"]) {
          prompter.say("step", "herald doctor");
          printDoctor(await runDoctor());
        }
        clack?.outro(
          outcome.written
            ? "Done. Start Herald with `herald gateway` (or `herald service install`)."
            : "Done.",
        );
      } catch (err) {
        if (err instanceof SetupCancelled) {
          clack?.cancel(err.message);
          if (!clack) process.stderr.write(`${err.message}\n`);
          process.exitCode = 130;
          return;
        }
        if (err instanceof CheckFailed) throw new Error(`${err.message}\nNothing was written.`);
        throw err;
      }
    }),
  );
}
