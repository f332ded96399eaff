/**
 * Sandboxes scenario: what a cloud backend adds to a command and a file call, each provider's real SDK
 * against its fake API on 127.0.0.1 (which runs the command on this host), beside the local backend
 * running the same command. So the figures are Herald's and the SDK's own overhead (requests,
 * wrapping, parsing), not a provider's network or start-up times. Also: the first command of a
 * workspace (the sandbox made) and the first after an idle pause (resumed).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CloudBackend } from "../agent/exec/cloud.js";
import { createDaytonaDriver } from "../agent/exec/cloud-daytona.js";
import { createVercelDriver } from "../agent/exec/cloud-vercel.js";
import { LocalBackend } from "../agent/exec/local.js";
import { runCommand } from "../agent/exec/run.js";
import type { ExecutionBackend, Workspace } from "../agent/exec/types.js";
import { startFakeDaytona } from "../tests/fakes/daytona/index.js";
import type { RunningFake } from "../tests/fakes/sandbox-host/index.js";
import { startFakeVercel } from "../tests/fakes/vercel/index.js";
import { machineLine, percentile, round } from "./lib.js";

export interface SandboxesBenchOptions {
  /** Commands (and file write + read pairs) per backend. */
  iterations: number;
}

export interface SandboxFigures {
  backend: string;
  commandP50Ms: number;
  commandP99Ms: number;
  fileP50Ms: number;
  createMs: number | undefined;
  resumeMs: number | undefined;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function measure(
  name: string,
  backend: ExecutionBackend,
  root: string,
  opts: SandboxesBenchOptions,
): Promise<SandboxFigures> {
  const ws: Workspace = { key: name, dir: join(root, name) };
  const cloud = backend instanceof CloudBackend ? backend : undefined;
  const createMs = await time(async () => {
    await backend.prepare(ws);
    await runCommand(backend, ws, { command: "true" });
  });
  const commands: number[] = [];
  const files: number[] = [];
  const data = Buffer.alloc(4096, 97);
  for (let i = 0; i < opts.iterations; i++) {
    commands.push(await time(() => runCommand(backend, ws, { command: "echo ok" })));
    files.push(
      await time(async () => {
        const f = backend.files(ws);
        await f.write(`bench/f${i % 10}.txt`, data);
        await f.read(`bench/f${i % 10}.txt`, { offset: 0, length: 4096 });
      }),
    );
  }
  let resumeMs: number | undefined;
  if (cloud) {
    await cloud.close(); // pauses the sandbox, as a stopping gateway does
    const again = cloneBackend(cloud);
    resumeMs = await time(() => runCommand(again, ws, { command: "true" }));
    await again.release(ws);
    await again.close();
  } else await backend.close();
  return {
    backend: name,
    commandP50Ms: round(percentile(commands, 50), 1),
    commandP99Ms: round(percentile(commands, 99), 1),
    fileP50Ms: round(percentile(files, 50), 1),
    createMs: cloud ? round(createMs, 1) : undefined,
    resumeMs: resumeMs === undefined ? undefined : round(resumeMs, 1),
  };
}

const makers = new Map<CloudBackend, () => CloudBackend>();
function cloneBackend(backend: CloudBackend): CloudBackend {
  return makers.get(backend)!();
}

/** Runs the scenario: local, then Daytona and Vercel against their fakes. */
export async function benchSandboxes(opts: SandboxesBenchOptions): Promise<SandboxFigures[]> {
  const root = mkdtempSync(join(tmpdir(), "herald-bench-sbx-"));
  const fakes: RunningFake[] = [];
  try {
    const results = [await measure("local", new LocalBackend(), root, opts)];
    const daytona = await startFakeDaytona({ apiKey: "bench" });
    const vercel = await startFakeVercel({ token: "bench", teamId: "team_bench" });
    fakes.push(daytona, vercel);
    const workdir = join(root, "{workspace}");
    const makeDaytona = () =>
      new CloudBackend({
        provider: "daytona",
        workdir,
        driver: () => createDaytonaDriver({ apiKey: "bench", apiUrl: daytona.apiUrl, idleStopMs: 600_000 }),
      });
    const makeVercel = () =>
      new CloudBackend({
        provider: "vercel",
        workdir,
        driver: () =>
          createVercelDriver({
            token: "bench",
            teamId: "team_bench",
            projectId: "prj_bench",
            apiUrl: vercel.url,
          }),
      });
    for (const [name, make] of [
      ["daytona", makeDaytona],
      ["vercel", makeVercel],
    ] as const) {
      const backend = make();
      makers.set(backend, make);
      results.push(await measure(name, backend, root, opts));
    }
    return results;
  } finally {
    await Promise.all(fakes.map((f) => f.stop()));
    rmSync(root, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md section. */
export function sandboxesMarkdown(
  results: SandboxFigures[],
  opts: SandboxesBenchOptions,
  command: string,
): string {
  const ms = (v: number | undefined) => (v === undefined ? "–" : String(v));
  const rows = results.map(
    (r) =>
      `| ${r.backend} | ${r.commandP50Ms} | ${r.commandP99Ms} | ${r.fileP50Ms} | ${ms(r.createMs)} | ${ms(r.resumeMs)} |`,
  );
  return [
    "## Cloud sandboxes: Herald's overhead per command",
    "",
    `\`${command}\`; ${machineLine()}. Each provider's SDK against its fake API on 127.0.0.1, which runs the`,
    `command with \`/bin/sh\` on this host; the local backend runs the same command. ${opts.iterations} commands`,
    "(`echo ok` through `runCommand`) and as many file pairs (`write_file` of 4 KiB, then its `read`) per",
    'backend; "first command" imports the provider\'s SDK (loaded on first use) and makes the sandbox, "resumed"',
    "is the first command after the sandbox was paused. A cloud command runs the run script the ssh and docker",
    "backends use (a pid file, `setsid`, `env -i`: more processes than local) besides its requests; a file write",
    "is a stat, an upload and a rename command (Vercel's stat is a command too). A real provider adds its network",
    "round trips (tens of ms each) and start-up times. On a machine shared with other work p99 carries its noise.",
    "",
    "| backend | command p50 ms | command p99 ms | file write+read p50 ms | first command ms | resumed ms |",
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}
