/**
 * `herald cron add|list|run|remove`. The CLI writes the cron tables of `state.db`; a running gateway
 * notices within a few seconds (it polls the tables' change counter), so nothing needs a restart.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { ConfigError, describeError, HeraldError } from "../../core/errors.js";
import {
  buildSpec,
  formatJobLine,
  formatRunLine,
  HOME_CHANNELS_NAMESPACE,
  HomeChannels,
  jobView,
  type MissedRunPolicy,
  newJobId,
  nextOccurrence,
  SqliteCronStore,
} from "../../scheduler/index.js";
import { SqliteState } from "../../sessions/index.js";
import { type HeraldConfig, loadConfig } from "../config.js";
import { chatParser, platformModules } from "../platforms.js";

/** What the cron commands use besides their arguments (tests pass their own). */
export interface CronCliDeps {
  /** @defaultValue loadConfig() */
  config?: () => HeraldConfig;
  /** Standard output. @defaultValue process.stdout */
  out?: (text: string) => void;
  /** Messages for people (notes, errors). @defaultValue process.stderr */
  err?: (text: string) => void;
}

interface AddOptions {
  schedule: string;
  prompt: string;
  deliver: string;
  name?: string;
  timezone?: string;
  skill?: string[];
  toolsets?: string;
  model?: string;
  timeout?: number;
  missed?: MissedRunPolicy;
}

/** Registers `herald cron …` on the program. */
export function registerCronCommands(program: Command, deps: CronCliDeps = {}): Command {
  const out = deps.out ?? ((t: string) => void process.stdout.write(t));
  const err = deps.err ?? ((t: string) => void process.stderr.write(t));
  const config = deps.config ?? (() => loadConfig());

  /** Runs a command body with the cron store open; errors become a message and exit code 1 (2: config). */
  const withStore = (fn: (store: SqliteCronStore, cfg: HeraldConfig) => void) => () => {
    let store: SqliteCronStore | undefined;
    try {
      const cfg = config();
      store = SqliteCronStore.open(join(cfg.homeDir, "state.db"));
      fn(store, cfg);
    } catch (e) {
      err(`${e instanceof HeraldError ? e.message : describeError(e)}\n`);
      process.exitCode = e instanceof ConfigError ? 2 : 1;
    } finally {
      store?.close();
    }
  };

  const cron = program
    .command("cron")
    .description("scheduled jobs: the agent runs a prompt on a schedule and reports");

  cron
    .command("add")
    .description("add a job; prints its id")
    .requiredOption(
      "--schedule <schedule>",
      'cron expression ("0 8 * * 1-5"), "every 2h", "30m", "in 20m" or an ISO time',
    )
    .requiredOption("--prompt <text>", "what the agent does on each run (a fresh conversation)")
    .requiredOption(
      "--deliver <targets>",
      "comma list: <platform> (home channel), <platform>:<chat>[:<thread>], email:<address>, local",
    )
    .option("--name <name>", "a short name")
    .option("--timezone <zone>", "IANA zone of the schedule (default: the configured one)")
    .option("--skill <name...>", "skills each run uses")
    .option("--toolsets <list>", "comma list of toolsets each run may use")
    .option("--model <model>", "model of the runs")
    .option("--timeout <minutes>", "run time limit (default 10)", Number.parseFloat)
    .option("--missed <policy>", "after downtime: auto, run or skip (default auto)")
    .action((opts: AddOptions) => withStore((store, cfg) => addJob(store, cfg, opts, { out, err }))());

  cron
    .command("list")
    .description("list jobs with their recent runs (status, duration, output or error)")
    .option("--runs <n>", "runs shown per job", (v) => Number.parseInt(v, 10), 5)
    .action((opts: { runs: number }) => withStore((store, cfg) => listJobs(store, cfg, opts.runs, out))());

  cron
    .command("run <id>")
    .description("run a job now (the running gateway starts it within a few seconds)")
    .action((id: string) =>
      withStore((store) => {
        if (!store.getJob(id)) throw notFound(id);
        const now = Date.now();
        const run = store.addRun(id, now, "manual", now);
        out(`Queued run ${run.id} of ${id}; the running gateway starts it within a few seconds.\n`);
      })(),
    );

  cron
    .command("remove <id>")
    .description("remove a job and its run history")
    .action((id: string) =>
      withStore((store) => {
        if (!store.deleteJob(id)) throw notFound(id);
        out(`Removed job ${id}.\n`);
      })(),
    );

  return cron;
}

function notFound(id: string): HeraldError {
  return new HeraldError(`No job ${id}. \`herald cron list\` shows the ids.`, { code: "not_found" });
}

/** Notes for `<platform>` targets that have no home channel yet. */
function homeChannelNotes(cfg: HeraldConfig, deliver: readonly string[]): string[] {
  const platforms = deliver.filter((t) => /^[a-z][a-z0-9_-]*$/.test(t) && t !== "local" && t !== "origin");
  if (platforms.length === 0) return [];
  const state = SqliteState.open(join(cfg.homeDir, "state.db"));
  try {
    const homes = new HomeChannels(
      state.kv(HOME_CHANNELS_NAMESPACE),
      (p) => cfg.platforms[p]?.homeChannel,
      chatParser,
    );
    return platforms
      .filter((p) => !homes.get(p))
      .map(
        (p) =>
          `Note: ${p} has no home channel yet; send /sethome in the ${p} chat that should get the reports, or set ${p.toUpperCase()}_HOME_CHANNEL.`,
      );
  } finally {
    state.close();
  }
}

/** `herald cron add`: builds the job from the options, stores it, prints its id. */
function addJob(
  store: SqliteCronStore,
  cfg: HeraldConfig,
  opts: AddOptions,
  io: { out: (text: string) => void; err: (text: string) => void },
): void {
  const now = Date.now();
  const spec = buildSpec(
    {
      schedule: opts.schedule,
      prompt: opts.prompt,
      deliver: opts.deliver,
      name: opts.name,
      timezone: opts.timezone,
      skills: opts.skill,
      toolsets: opts.toolsets?.split(",").map((s) => s.trim()),
      model: opts.model,
      timeoutMinutes: opts.timeout,
      missedRuns: opts.missed,
    },
    {
      timezone: cfg.timezone,
      now,
      knownPlatforms: new Set([...platformModules.map((m) => m.name), "api"]),
    },
  );
  const job = store.insertJob(newJobId(), spec, nextOccurrence(spec.schedule, now), now);
  for (const note of homeChannelNotes(cfg, spec.deliver)) io.err(`${note}\n`);
  io.err(`Added: ${formatJobLine(jobView(job, undefined, cfg.timezone))}\n`);
  io.out(`${job.id}\n`);
}

/** `herald cron list`: every job with its last `runsPerJob` runs. */
function listJobs(
  store: SqliteCronStore,
  cfg: HeraldConfig,
  runsPerJob: number,
  out: (text: string) => void,
): void {
  const jobs = store.listJobs();
  if (jobs.length === 0) out("No scheduled jobs. Add one with `herald cron add`.\n");
  for (const job of jobs) {
    const runs = store.runs(job.id, Math.max(0, runsPerJob));
    out(`${formatJobLine(jobView(job, runs[0], cfg.timezone))}\n`);
    out(`    prompt: ${job.prompt.replace(/\s+/g, " ").slice(0, 200)}\n`);
    for (const run of runs) out(`    ${formatRunLine(run, cfg.timezone)}\n`);
  }
}
