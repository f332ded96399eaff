/** `herald sessions list|show|search|export|prune`: the stored sessions, read from `state.db`. */
import type { Command } from "commander";
import { createCatalog } from "../../agent/index.js";
import { usageText } from "../../agent/providers/index.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";
import { openState } from "./state.js";

const config = () => loadConfig();
const action = <A extends unknown[]>(fn: (...args: A) => Promise<void> | void) =>
  cliAction(fn, { exit: true });
const count = (v: string) => Number.parseInt(v, 10);

/** Adds `herald sessions` to the program. */
export function registerSessionsCommands(program: Command): void {
  const sessions = program.command("sessions").description("list, show, search, export and prune sessions");
  sessions
    .command("list")
    .option("--limit <n>", "how many", count, 20)
    .option("--active", "only active sessions")
    .option("--agent <name>", "only this agent's sessions (default: the default agent's)")
    .action(action(listSessions));
  sessions.command("show <id>").action(action(showSession));
  sessions
    .command("search <query...>")
    .option("--limit <n>", "how many hits", count, 10)
    .action(action(searchSessions));
  sessions
    .command("export <id>")
    .option("--format <format>", "json or md", "json")
    .action(action(exportSession));
  sessions
    .command("prune")
    .requiredOption("--older-than <days>", "delete ended sessions idle for more than this many days", (v) =>
      Number.parseFloat(v),
    )
    .action(action(pruneSessions));
}

function listSessions(opts: { limit: number; active?: boolean; agent?: string }): void {
  const state = openState(config());
  const agent = opts.agent?.trim().toLowerCase();
  for (const s of state.sessions.list({
    limit: opts.limit,
    activeOnly: opts.active,
    ...(agent ? { agent } : {}),
  })) {
    const when = new Date(s.lastActiveAt).toISOString().slice(0, 16).replace("T", " ");
    process.stdout.write(
      `${s.id}  ${when}  ${String(s.messageCount).padStart(4)} msgs  ${s.key}${s.endedAt ? `  (ended: ${s.endReason})` : ""}\n`,
    );
  }
  state.close();
}

function showSession(id: string): void {
  const cfg = config();
  const state = openState(cfg);
  const session = state.sessions.get(id);
  if (!session) throw new Error(`No session ${id}. \`herald sessions list\` shows the ids.`);
  process.stdout.write(`${session.key}  (${session.messageCount} messages)\n\n`);
  for (const m of state.sessions.load(id)) {
    const content = m.message.content ?? "";
    const calls =
      m.message.role === "assistant" && m.message.tool_calls?.length
        ? ` [tools: ${m.message.tool_calls.map((c) => c.function.name).join(", ")}]`
        : "";
    process.stdout.write(`${m.message.role}${calls}: ${content}\n\n`);
  }
  process.stdout.write(`${usageText("Usage", state.usage.forSession(id), createCatalog(cfg))}\n`);
  state.close();
}

function searchSessions(query: string[], opts: { limit: number }): void {
  const state = openState(config());
  for (const hit of state.sessions.search(query.join(" "), { limit: opts.limit })) {
    process.stdout.write(
      `${hit.sessionId}  ${new Date(hit.createdAt).toISOString().slice(0, 16)}  ${hit.role}: ${hit.snippet}\n`,
    );
  }
  state.close();
}

function exportSession(id: string, opts: { format: string }): void {
  const state = openState(config());
  const session = state.sessions.get(id);
  if (!session) throw new Error(`No session ${id}.`);
  const messages = state.sessions.load(id);
  if (opts.format === "md") {
    process.stdout.write(`# ${session.key}\n\n`);
    for (const m of messages) process.stdout.write(`**${m.message.role}**: ${m.message.content ?? ""}\n\n`);
  } else {
    process.stdout.write(
      `${JSON.stringify({ session, messages: messages.map((m) => m.message) }, null, 2)}\n`,
    );
  }
  state.close();
}

function pruneSessions(opts: { olderThan: number }): void {
  const state = openState(config());
  const removed = state.sessions.prune(Date.now() - opts.olderThan * 86_400_000);
  process.stdout.write(`Deleted ${removed} ended session(s).\n`);
  state.close();
}
