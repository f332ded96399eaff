/**
 * Prints the cost of one command through each backend: median and p90 of `true` over 20 runs
 * (runCommand end to end: spawn, wait, capture). A script, not a test:
 *   node_modules/.bin/tsx tests/e2e/exec-measure.ts
 */
import { dirname } from "node:path";
import { LocalBackend } from "../../agent/exec/local.js";
import { runCommand } from "../../agent/exec/run.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import { SshBackend } from "../../agent/exec/ssh.js";
import type { ExecutionBackend } from "../../agent/exec/types.js";
import { startSshd } from "../helpers/sshd.js";
import { tempWorkspace } from "./exec-contract.js";

const RUNS = 20;

async function measure(label: string, backend: ExecutionBackend, ws: ReturnType<typeof tempWorkspace>) {
  await backend.prepare(ws);
  await runCommand(backend, ws, { command: "true" }); // warm-up (ssh: opens the control connection)
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const result = await runCommand(backend, ws, { command: "true" });
    times.push(performance.now() - started);
    if (result.exitCode !== 0) throw new Error(`${label}: true exited ${result.exitCode}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
  console.log(`${label.padEnd(28)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   (${RUNS} runs of true)`);
}

const ws = tempWorkspace("measure:1");
const sshd = await startSshd();
try {
  await measure("local", new LocalBackend(), ws);
  await measure("sandbox (bwrap + prlimit)", new SandboxBackend(), ws);
  const ssh = new SshBackend({
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    identityFile: sshd.identityFile,
    stateDir: `${sshd.dir}/state`,
    remoteRoot: dirname(ws.dir),
  });
  await measure("ssh (127.0.0.1, ControlMaster)", ssh, ws);
  await ssh.close();
} finally {
  await sshd.stop();
  ws.cleanup();
}
