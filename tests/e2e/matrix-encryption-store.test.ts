/**
 * The Matrix crypto store under a real kill: a `herald gateway` process with MATRIX_ENCRYPTION=true
 * answers Alice's encrypted message, is killed with SIGKILL (no shutdown, nothing flushed), starts
 * again, and both directions still decrypt on the same device with the same keys. And the store refuses
 * a different MATRIX_STORE_KEY with an error that names it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeHomeserver, startFakeHomeserver } from "../fakes/matrix/index.js";
import { freePort } from "../helpers/net.js";
import { BUNDLE, ensureBuilt } from "../helpers/tmux.js";
import { ALICE, type MatrixEnv, startMatrixEnv } from "./matrix-env.js";
import { type MatrixPeer, startPeer } from "./matrix-peer.js";

// The gateway as npm start runs it (its bundle, built first): one process, so SIGKILL reaches the
// gateway itself.
const nodeArgs = [BUNDLE, "gateway"];

let llm: FakeLlm | undefined;
let fake: FakeHomeserver | undefined;
let child: ChildProcess | undefined;
let peer: MatrixPeer | undefined;
let env: MatrixEnv | undefined;
let home: string | undefined;

afterEach(async () => {
  peer?.stop();
  child?.kill("SIGKILL");
  await env?.close();
  await fake?.close();
  await llm?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  peer = child = env = fake = llm = home = undefined;
});

async function startGateway(vars: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, nodeArgs, { env: { ...process.env, ...vars }, stdio: "ignore" });
  const url = `http://127.0.0.1:${vars["API_SERVER_PORT"]}/health`;
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`gateway exited early with ${proc.exitCode}`);
    try {
      if ((await fetch(url)).ok) return proc;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("gateway did not become ready");
}

/** The bot's identity keys as uploaded, with the ids of all its devices. */
function botKeys(f: FakeHomeserver): { deviceIds: string[]; keys: unknown } {
  const devices = f.state.keys.devices.get(f.botUserId) ?? new Map();
  const first = [...devices.values()][0] as { keys: Record<string, unknown> } | undefined;
  return { deviceIds: [...devices.keys()], keys: first?.keys["keys"] };
}

beforeAll(async () => {
  await ensureBuilt();
}, 600_000);

describe("matrix crypto store", () => {
  it("survives SIGKILL: after restart the same device decrypts and is decrypted", async () => {
    llm = await startFakeLlm();
    fake = await startFakeHomeserver();
    home = mkdtempSync(join(tmpdir(), "herald-mx-crash-"));
    const vars = {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      HERALD_LOG_LEVEL: "silent",
      API_SERVER_PORT: String(await freePort()),
      MATRIX_HOMESERVER: fake.url,
      MATRIX_ACCESS_TOKEN: fake.botAccessToken,
      MATRIX_ALLOWED_USERS: ALICE,
      MATRIX_STREAM: "off",
      MATRIX_ENCRYPTION: "true",
      MATRIX_STORE_KEY: "kill-test-key",
    };
    child = await startGateway(vars);
    const f = fake;
    await f.waitFor(() => botKeys(f).keys, 30_000);
    const identity = botKeys(f);
    peer = await startPeer(f, ALICE, "ALICEPHONE");
    const room = f.createRoom({ members: [ALICE], direct: true, encrypted: true });
    await f.waitFor(() => peer!.client.getRoom(room));
    await peer.sendText(room, "first before the kill");
    const first = await peer.waitFor(f.botUserId, (m) => String(m.content["body"]).includes("first"), 30_000);
    expect(first.content["body"]).toBe("echo: first before the kill");

    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    child = await startGateway(vars);
    await peer.sendText(room, "second after the kill");
    const second = await peer.waitFor(
      f.botUserId,
      (m) => String(m.content["body"]).includes("second"),
      30_000,
    );
    expect(second.wireType).toBe("m.room.encrypted");
    expect(second.content["body"]).toBe("echo: second after the kill");
    expect(botKeys(f)).toEqual(identity);
    expect(llm.requests).toHaveLength(2);
  }, 180_000);

  it("refuses a different MATRIX_STORE_KEY, naming the key and the fix", async () => {
    env = await startMatrixEnv();
    await env.start({ encryption: true, storeKey: "the first key" });
    await env.stopAdapter();
    await expect(env.start({ encryption: true, storeKey: "another key" })).rejects.toThrow(
      /MATRIX_STORE_KEY does not open the Matrix crypto store .*Fix: set MATRIX_STORE_KEY/,
    );
    await expect(env.start({ encryption: true })).rejects.toThrow(
      /encrypted but MATRIX_STORE_KEY is not set/,
    );
    // The right key still opens it: same device, nothing lost.
    await env.start({ encryption: true, storeKey: "the first key" });
    expect(env.adapter?.status().state).toBe("running");
  }, 60_000);
});
