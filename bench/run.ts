/**
 * `npm run bench`: runs the scenarios and writes their figures to BENCHMARKS.md.
 * `npm run bench -- api` runs one scenario. `npm run bench -- floor --check` runs the floor scenario
 * and compares its ratios with the committed ones instead of writing them (exit 1 on a regression).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiMarkdown, benchApi } from "./api.js";
import { benchBrowser, browserMarkdown } from "./browser.js";
import { benchCheckpoints, checkpointsMarkdown } from "./checkpoints.js";
import { benchCode, codeMarkdown } from "./code.js";
import { benchCommands, commandsMarkdown } from "./commands.js";
import { benchDashboard, dashboardMarkdown } from "./dashboard.js";
import { benchDelegate, delegateMarkdown } from "./delegate.js";
import { benchExtensions, extensionsMarkdown } from "./extensions.js";
import { benchFiles, filesMarkdown } from "./files.js";
import { benchFloor, committedRatios, floorMarkdown, floorRatios, floorRegressions } from "./floor.js";
import { benchHandover, benchHandoverOps, handoverMarkdown, handoverOpsMarkdown } from "./handover.js";
import { benchIdle, idleMarkdown } from "./idle.js";
import { benchImports, importsMarkdown } from "./imports.js";
import { benchLatency, latencyMarkdown } from "./latency.js";
import { machineLine, startFlags, writeSection } from "./lib.js";
import { benchLogs, logsMarkdown } from "./logs.js";
import { benchMcp, mcpMarkdown } from "./mcp.js";
import { benchRecall, recallMarkdown } from "./recall.js";
import { benchRedis, redisMarkdown } from "./redis.js";
import { benchRequests, requestsMarkdown } from "./requests.js";
import { allToolsetsMarkdown, benchAllToolsets } from "./requests-all.js";
import { benchResponses, responsesMarkdown } from "./responses.js";
import { benchSandboxes, sandboxesMarkdown } from "./sandboxes.js";
import { benchSenses, sensesMarkdown } from "./senses.js";
import { benchStream, streamMarkdown } from "./stream.js";
import { benchTelegram, telegramMarkdown } from "./telegram.js";
import { benchTools, toolsMarkdown } from "./tools.js";
import { benchTransports, transportsMarkdown } from "./transports.js";
import { benchTui, tuiMarkdown } from "./tui.js";
import { benchTurnProfile, turnProfileMarkdown } from "./turn-profile.js";
import { benchWebchat, webchatMarkdown } from "./webchat.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const file = join(root, "BENCHMARKS.md");
const check = process.argv.includes("--check");
const wanted = new Set(process.argv.slice(2).filter((arg) => arg !== "--check"));
if (check && wanted.size === 0) wanted.add("floor");
const run = (name: string) => wanted.size === 0 || wanted.has(name);

const scenarios: Record<string, () => Promise<void>> = {
  transports: async () => {
    const opts = { calls: 600, rounds: 10, sessionTurns: 20 };
    const result = await benchTransports(opts);
    console.log(JSON.stringify({ transports: result }));
    writeSection(file, "transports", transportsMarkdown(result, opts, "npm run bench -- transports"));
  },
  floor: async () => {
    const opts = {
      root,
      runs: Number(process.env["HERALD_FLOOR_RUNS"] ?? 3),
      starts: Number(process.env["HERALD_FLOOR_STARTS"] ?? 4),
      singles: 100,
      chats: 200,
      perChat: 5,
      // HERALD_BENCH_BEFORE=<another build's cli.js>: that build too, in the same runs.
      before: check ? undefined : process.env["HERALD_BENCH_BEFORE"],
    };
    const committed = committedRatios(readFileSync(file, "utf8"));
    const { result } = await benchFloor(opts);
    console.log(JSON.stringify({ floor: result, ratios: floorRatios(result) }));
    if (!check) {
      writeSection(file, "floor", floorMarkdown(result, opts, "npm run bench -- floor"));
      return;
    }
    if (!committed)
      throw new Error("BENCHMARKS.md has no committed floor ratios: run `npm run bench -- floor` first");
    const regressions = floorRegressions(floorRatios(result), committed);
    for (const line of regressions) console.error(`regression: ${line}`);
    if (regressions.length) process.exitCode = 1;
    else console.log("floor: no ratio more than 25 % above the committed figures");
  },
  imports: async () => {
    const opts = { root, runs: 3, before: process.env["HERALD_BENCH_BEFORE"] };
    const result = await benchImports(opts);
    console.log(JSON.stringify({ imports: result }));
    writeSection(file, "imports", importsMarkdown(result, opts, "npm run bench -- imports"));
  },
  idle: async () => {
    const opts = { root, runs: 3, before: process.env["HERALD_BENCH_BEFORE"] };
    const result = await benchIdle(opts);
    console.log(JSON.stringify({ idle: result }));
    writeSection(file, "idle", idleMarkdown(result, opts, "npm run bench -- idle"));
  },
  latency: async () => {
    const opts = { root, runs: 3, messages: 100 };
    const result = await benchLatency(opts);
    console.log(JSON.stringify({ latency: result }));
    writeSection(file, "latency", latencyMarkdown(result, opts, "npm run bench -- latency"));
  },
  "turn-profile": async () => {
    const opts = { root, chats: 200, perChat: 5, before: process.env["HERALD_BENCH_BEFORE"] };
    const result = await benchTurnProfile(opts);
    console.log(JSON.stringify({ turnProfile: result }));
    writeSection(file, "turn-profile", turnProfileMarkdown(result, opts, "npm run bench -- turn-profile"));
  },
  api: async () => {
    const before = process.env["HERALD_BENCH_BEFORE"];
    const [result, defaults, earlier] = await benchApi({
      root,
      sessions: 200,
      turnsPerSession: 25,
      sequentialTurns: 500,
      rounds: 5,
      variants: [
        { name: "npm start", nodeFlags: startFlags(root) },
        { name: "V8 defaults", nodeFlags: [] },
        // HERALD_BENCH_BEFORE=<another build's cli.js>: that build as npm start runs it, in the same rounds.
        ...(before ? [{ name: "before", nodeFlags: startFlags(root), entry: before }] : []),
      ],
    });
    if (!result || !defaults) throw new Error("the api scenario returned no figures");
    console.log(JSON.stringify({ api: result, apiV8Defaults: defaults, before: earlier }));
    writeSection(file, "api", apiMarkdown(result, defaults, "npm run bench", startFlags(root), earlier));
  },
  telegram: async () => {
    const opts = { chats: 100, turnsPerChat: 3 };
    const limited = await benchTelegram(opts);
    const lifted = await benchTelegram({ ...opts, telegramLimits: false });
    console.log(JSON.stringify({ telegram: { limited, lifted } }));
    writeSection(file, "telegram", telegramMarkdown(limited, lifted, opts, "npm run bench"));
  },
  tools: async () => {
    const opts = {
      root,
      backends: ["local", "sandbox"] as ("local" | "sandbox")[],
      turns: 100,
      busySessions: 20,
    };
    const result = await benchTools(opts);
    console.log(JSON.stringify({ tools: result }));
    writeSection(file, "tools", toolsMarkdown(result, opts, "npm run bench -- tools"));
    const filesOpts = { root, calls: 200, turns: 100 };
    const files = await benchFiles(filesOpts);
    console.log(JSON.stringify({ files }));
    writeSection(file, "files", filesMarkdown(files, filesOpts, "npm run bench -- tools"));
  },
  commands: async () => {
    const opts = { otherSessions: 5000, iterations: 100 };
    const result = await benchCommands(opts);
    console.log(JSON.stringify({ commands: result }));
    writeSection(file, "commands", commandsMarkdown(result, opts, "npm run bench -- commands"));
  },
  sandboxes: async () => {
    const opts = { iterations: 100 };
    const result = await benchSandboxes(opts);
    console.log(JSON.stringify({ sandboxes: result }));
    writeSection(file, "sandboxes", sandboxesMarkdown(result, opts, "npm run bench -- sandboxes"));
  },
  checkpoints: async () => {
    const opts = { sizes: [1000, 10_000], runs: 30 };
    const result = await benchCheckpoints(opts);
    console.log(JSON.stringify({ checkpoints: result }));
    writeSection(file, "checkpoints", checkpointsMarkdown(result, opts, "npm run bench -- checkpoints"));
  },
  code: async () => {
    const opts = { files: 20, calls: 200 };
    const result = await benchCode(opts);
    console.log(JSON.stringify({ code: result }));
    writeSection(file, "code", codeMarkdown(result, opts, "npm run bench -- code"));
  },
  senses: async () => {
    const opts = { extractRuns: 20, transcribeRuns: 30 };
    const result = await benchSenses(opts);
    console.log(JSON.stringify({ senses: result }));
    writeSection(file, "senses", sensesMarkdown(result, opts, "npm run bench -- senses"));
  },
  mcp: async () => {
    const opts = { root, calls: 500, turns: 200, starts: 5, servers: 5 };
    const result = await benchMcp(opts);
    console.log(JSON.stringify({ mcp: result }));
    writeSection(file, "mcp", mcpMarkdown(result, opts, "npm run bench -- mcp"));
  },
  requests: async () => {
    const opts = { turns: 12 };
    const result = await benchRequests(opts);
    console.log(JSON.stringify({ requests: result }));
    const allOpts = { root, turns: 12, cpuTurns: 600 };
    const all = await benchAllToolsets(allOpts);
    console.log(JSON.stringify({ requestsAllToolsets: all }));
    const markdown = `${requestsMarkdown(result, opts, "npm run bench -- requests")}\n\n${allToolsetsMarkdown(all, allOpts)}`;
    writeSection(file, "requests", markdown);
  },
  logs: async () => {
    const result = await benchLogs({ lines: 100_000 });
    console.log(JSON.stringify({ logs: result }));
    writeSection(file, "logs", logsMarkdown(result, machineLine(), "npm run bench -- logs"));
  },
  redis: async () => {
    const opts = {
      root,
      workerCounts: [1, 2, 4],
      sequentialTurns: 300,
      sessions: 100,
      turnsPerSession: 10,
      workerConcurrency: 4,
    };
    const result = await benchRedis(opts);
    console.log(JSON.stringify({ redis: result }));
    writeSection(file, "redis", redisMarkdown(result, opts, "npm run bench -- redis"));
  },
  handover: async () => {
    const opts = { root, workerCounts: [1, 2, 4], sessions: 4, turnsPerSession: 10 };
    const ops = await benchHandoverOps(25);
    const result = await benchHandover(opts);
    console.log(JSON.stringify({ handover: result, ops }));
    const markdown = `${handoverMarkdown(result, opts, "npm run bench -- handover")}\n\n${handoverOpsMarkdown(ops, 25)}`;
    writeSection(file, "handover", markdown);
  },
  delegate: async () => {
    const opts = { root, workerCounts: [1, 2, 4], turns: 30, children: 10 };
    const result = await benchDelegate(opts);
    console.log(JSON.stringify({ delegate: result }));
    writeSection(file, "delegate", delegateMarkdown(result, opts, "npm run bench -- delegate"));
  },
  dashboard: async () => {
    const opts = {
      root,
      sessions: 10_000,
      messagesPerSession: 100,
      requests: 200,
      turnsPerRound: 100,
      rounds: 10,
    };
    const result = await benchDashboard(opts);
    console.log(JSON.stringify({ dashboard: result }));
    writeSection(file, "dashboard", dashboardMarkdown(result, opts, "npm run bench -- dashboard"));
  },
  extensions: async () => {
    const opts = { root, turns: 300, mcpCalls: 300, starts: 3 };
    const result = await benchExtensions(opts);
    console.log(JSON.stringify({ extensions: result }));
    writeSection(file, "extensions", extensionsMarkdown(result, opts, "npm run bench -- extensions"));
  },
  stream: async () => {
    const single = { chats: 1, turnsPerChat: 20, pieces: 40, pieceDelayMs: 100, pauseMs: 2000 };
    const many = { chats: 50, turnsPerChat: 2, pieces: 40, pieceDelayMs: 100, pauseMs: 2000 };
    const one = await benchStream(single);
    const loaded = await benchStream(many);
    console.log(JSON.stringify({ stream: { single: one, many: loaded } }));
    writeSection(file, "stream", streamMarkdown(one, loaded, { single, many }, "npm run bench -- stream"));
  },
  recall: async () => {
    const opts = {
      root,
      dimensions: 256,
      backlogMessages: 20_000,
      scales: [100_000, 1_000_000],
      messagesPerSession: 100,
      searches: 30,
      turnsPerRound: 100,
      rounds: 3,
    };
    const result = await benchRecall(opts);
    console.log(JSON.stringify({ recall: result }));
    writeSection(file, "recall", recallMarkdown(result, opts, "npm run bench -- recall"));
  },
  tui: async () => {
    const opts = { root, keystrokes: 200, replyLines: 500, pieceMs: 5, idleSeconds: 10 };
    const result = await benchTui(opts);
    console.log(JSON.stringify({ tui: result }));
    writeSection(file, "tui", tuiMarkdown(result, opts, "npm run bench -- tui"));
  },
  browser: async () => {
    const opts = { runs: 30, sessions: 5 };
    const result = await benchBrowser(opts);
    console.log(JSON.stringify({ browser: result }));
    writeSection(file, "browser", browserMarkdown(result, opts, "npm run bench -- browser"));
  },
  webchat: async () => {
    const opts = { turns: 20, opens: 10, sessionMessages: 1000 };
    const result = await benchWebchat(opts);
    console.log(JSON.stringify({ webchat: result }));
    writeSection(file, "webchat", webchatMarkdown(result, opts, "npm run bench -- webchat"));
  },
  responses: async () => {
    const opts = { root, turns: 300 };
    const results = await benchResponses(opts);
    console.log(JSON.stringify({ responses: results }));
    writeSection(file, "responses", responsesMarkdown(results, opts, "npm run bench -- responses"));
  },
};

for (const [name, scenario] of Object.entries(scenarios)) {
  if (!run(name)) continue;
  console.log(`running ${name}…`);
  await scenario();
}
if (!check) console.log(`figures written to ${file}`);
