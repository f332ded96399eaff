/**
 * `herald tasks list|show|add`: the shared task board from the terminal (the `task_board` tool's board,
 * in `state.db`). Adding works while the gateway runs: the board is one table, changed by single
 * statements, so an agent's claim and a person's add never collide.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { ConfigError, describeError, HeraldError } from "../../core/errors.js";
import {
  formatTask,
  formatTaskLine,
  SqliteState,
  SqliteTaskBoard,
  type TaskState,
} from "../../sessions/index.js";
import { type HeraldConfig, loadConfig } from "../config.js";

/** What the task commands use besides their arguments (tests pass their own). */
export interface TaskBoardCliDeps {
  /** @defaultValue loadConfig() */
  config?: () => HeraldConfig;
  /** @defaultValue process.stdout */
  out?: (text: string) => void;
  /** @defaultValue process.stderr */
  err?: (text: string) => void;
}

const STATES: readonly TaskState[] = ["todo", "claimed", "done", "failed"];

/** Registers `herald tasks …` on the program. */
export function registerTaskBoardCommands(program: Command, deps: TaskBoardCliDeps = {}): Command {
  const out = deps.out ?? ((t: string) => void process.stdout.write(t));
  const err = deps.err ?? ((t: string) => void process.stderr.write(t));
  const config = deps.config ?? (() => loadConfig());

  const withBoard = (fn: (board: SqliteTaskBoard) => void) => {
    let state: SqliteState | undefined;
    try {
      const cfg = config();
      state = SqliteState.open(join(cfg.homeDir, "state.db"));
      fn(new SqliteTaskBoard(state.database, { claimTtlMs: cfg.taskBoard.claimTtlS * 1000 }));
    } catch (e) {
      err(`${e instanceof HeraldError ? e.message : describeError(e)}\n`);
      process.exitCode = e instanceof ConfigError ? 2 : 1;
    } finally {
      state?.close();
    }
  };

  const tasks = program
    .command("tasks")
    .description("the shared task board that agents claim from (the task_board tool)");

  tasks
    .command("list")
    .description("list tasks, oldest first")
    .option("--state <state>", `only tasks in this state (${STATES.join(", ")})`)
    .option("--limit <n>", "at most this many", (v) => Number.parseInt(v, 10), 200)
    .action((opts: { state?: string; limit: number }) =>
      withBoard((board) => {
        if (opts.state && !STATES.includes(opts.state as TaskState))
          throw new HeraldError(`--state must be one of ${STATES.join(", ")}, not '${opts.state}'.`, {
            code: "invalid_input",
          });
        const list = board.list({ state: opts.state as TaskState | undefined, limit: opts.limit });
        if (list.length === 0) out("The board is empty. Add a task with `herald tasks add <title>`.\n");
        for (const task of list) out(`${formatTaskLine(task)}\n`);
      }),
    );

  tasks
    .command("show <id>")
    .description("show one task: details, owner, claim, result")
    .action((id: string) =>
      withBoard((board) => {
        const task = board.get(Number.parseInt(id, 10));
        if (!task)
          throw new HeraldError(`There is no task '${id}'; \`herald tasks list\` shows the ids.`, {
            code: "not_found",
          });
        out(`${formatTask(task)}\n`);
      }),
    );

  tasks
    .command("add <title>")
    .description("add a task in state todo; prints its id")
    .option("--details <text>", "what the task needs")
    .action((title: string, opts: { details?: string }) =>
      withBoard((board) => {
        const task = board.create(title, opts.details, { owner: "cli" });
        err(`Added: ${formatTaskLine(task)}\n`);
        out(`${task.id}\n`);
      }),
    );
  return tasks;
}
