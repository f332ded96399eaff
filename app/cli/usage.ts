/**
 * `herald usage [--since 24h|7d|30d|all] [--agent NAME]`: the usage ledger's totals from `state.db`, by
 * model with the estimated cost, by agent and by user; one agent's with `--agent`.
 */
import type { Command } from "commander";
import { createCatalog } from "../../agent/index.js";
import { usageReport } from "../../agent/providers/index.js";
import { ConfigError } from "../../core/errors.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";
import { openState } from "./state.js";

const DAY_MS = 86_400_000;

/** The periods `--since` takes: how far back, and how the title says it. */
const PERIODS: Record<string, [backMs: number | undefined, label: string]> = {
  "24h": [DAY_MS, "last 24 hours"],
  "7d": [7 * DAY_MS, "last 7 days"],
  "30d": [30 * DAY_MS, "last 30 days"],
  all: [undefined, "all time"],
};

/** Adds `herald usage` to the program. */
export function registerUsageCommand(program: Command): void {
  program
    .command("usage")
    .description("tokens and estimated cost by model, agent and user (one agent's with --agent)")
    .option("--since <period>", "24h, 7d, 30d or all", "all")
    .option("--agent <name>", "only this agent's usage (default: the default agent's)")
    .action(cliAction(printUsage, { exit: true }));
}

function printUsage(opts: { since: string; agent?: string }): void {
  const period = PERIODS[opts.since];
  if (!period) {
    throw new ConfigError(
      "--since",
      `--since must be 24h, 7d, 30d or all, got '${opts.since}'. Fix: e.g. --since 7d.`,
    );
  }
  const cfg = loadConfig();
  const agent = opts.agent?.trim().toLowerCase() || undefined;
  const state = openState(cfg);
  try {
    const since = period[0] === undefined ? undefined : Date.now() - period[0];
    const text = usageReport(state.usage, createCatalog(cfg), { since, agent, period: period[1] });
    process.stdout.write(`${text}\n`);
  } finally {
    state.close();
  }
}
