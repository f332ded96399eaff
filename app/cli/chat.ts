/**
 * `herald chat`: talk to the agent from a terminal. On a terminal it opens the full-screen UI; with
 * `--plain`, a pipe, `TERM=dumb` or in CI it keeps the line mode. Its turns run in this process (an
 * embedded gateway without adapters, HTTP server or cron firing, as on the Redis queue too), or on a
 * running gateway through its API server with `--url`. The UI's libraries (Ink, React) load only here.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { pino } from "pino";
import type { ChatBackend } from "../../adapters/cli/index.js";
import { ConfigError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { createProcessLogger } from "../../core/process-logger.js";
import { type HeraldConfig, loadConfig } from "../config.js";
import { cliAction } from "./action.js";

interface ChatOptions {
  url?: string;
  session?: string;
  plain?: boolean;
}

/** Whether this terminal gets the full-screen UI: both ends a terminal, not dumb, not CI. */
export function wantsTui(options: { plain?: boolean | undefined }, env = process.env): boolean {
  if (options.plain || !process.stdin.isTTY || !process.stdout.isTTY) return false;
  if (env["TERM"] === "dumb") return false;
  // Ink writes only its last frame under CI.
  return !(env["CI"] && env["CI"] !== "false" && env["CI"] !== "0");
}

/** Registers `herald chat` on the program. */
export function registerChatCommand(program: Command): Command {
  return program
    .command("chat")
    .description("talk to the agent from this terminal, with the same sessions and tools")
    .option("--url <url>", "use the gateway whose API server answers there (with API_SERVER_KEY when set)")
    .option("--session <id>", "with --url: the chat to continue (default: cli-<login name>)")
    .option("--plain", "line mode instead of the full-screen UI")
    .action(
      cliAction(
        async (options: ChatOptions) => {
          const cfg = loadConfig();
          const tui = wantsTui(options);
          // React's production build (its development build checks every render). The UI loads while
          // the gateway starts.
          if (tui) process.env["NODE_ENV"] ??= "production";
          const ui = tui ? import("../../adapters/cli/tui/index.js") : undefined;
          // Awaited below; until then a failed load must not count as unhandled.
          ui?.catch(() => undefined);
          const { backend, stop } = options.url
            ? await remoteBackend(cfg, options.url, options.session)
            : await embeddedBackend(cfg, tui);
          if (ui) {
            const { runTui } = await ui;
            await runTui(backend, { historyFile: join(cfg.homeDir, "chat_history") });
          } else {
            const { runLineChat } = await import("../../adapters/cli/index.js");
            await runLineChat(backend);
            process.stdout.write("\n");
          }
          await stop();
          process.exit(0);
        },
        { exit: true },
      ),
    );
}

/** The conversation on a running gateway. */
async function remoteBackend(
  cfg: HeraldConfig,
  url: string,
  session: string | undefined,
): Promise<{ backend: ChatBackend; stop(): Promise<void> }> {
  const { createRemoteChat, remoteProblem } = await import("../../adapters/cli/index.js");
  const { terminalUser } = await import("../../adapters/cli/index.js");
  if (!/^https?:\/\//.test(url))
    throw new ConfigError(
      "--url",
      `--url takes the API server's address, e.g. http://127.0.0.1:8642 (got '${url}').`,
    );
  const options = { url, key: cfg.apiServer.key, chatId: session ?? `cli-${terminalUser()}` };
  const problem = await remoteProblem(options);
  if (problem) throw new Error(problem);
  return { backend: createRemoteChat(options), stop: async () => {} };
}

/**
 * The conversation in this process: a gateway on the same state, its turns run here (also where the
 * gateway uses Redis workers). Under the full-screen UI its log goes to `logs/chat.log` only.
 */
async function embeddedBackend(
  base: HeraldConfig,
  tui: boolean,
): Promise<{ backend: ChatBackend; stop(): Promise<void> }> {
  const cfg = {
    ...base,
    apiServer: { ...base.apiServer, enabled: false },
    queue: { ...base.queue, redisUrl: undefined },
  };
  const level = process.env["HERALD_LOG_LEVEL"] ?? "warn";
  const logger = tui
    ? createProcessLogger({
        level,
        format: "json",
        tty: false,
        logsDir: join(cfg.homeDir, "logs"),
        fileName: "chat.log",
        stdout: { write: () => true },
      }).logger
    : // stderr: stdout is the conversation, maybe a pipe another program reads.
      createLogger({ level, destination: pino.destination({ dest: 2, sync: true }) });
  const { startGateway } = await import("../gateway-main.js");
  const { createCliAdapter } = await import("../../adapters/cli/index.js");
  const cli = createCliAdapter();
  const gateway = await startGateway(cfg, { logger, extraAdapters: [cli], localOnly: true });
  cli.attach(gateway.chat);
  return { backend: cli, stop: () => gateway.stop() };
}
