/**
 * Sandboxed commands with the network allowed share the host's network, loopback included: the API
 * server on 127.0.0.1 is one request away, and without API_SERVER_KEY it answers them as the owner
 * (a turn that sends to any chat). So that configuration is refused at start, naming the key.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../agent/exec/run.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";
import { tempWorkspace } from "../e2e/exec-contract.js";

const home = mkdtempSync(join(tmpdir(), "herald-netkey-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("the sandbox's network and the key-less API", () => {
  it("refuses HERALD_EXEC_NETWORK=true while the API server has no key, naming API_SERVER_KEY", () => {
    let thrown: unknown;
    try {
      loadConfig({ env: { HERALD_HOME: home, HERALD_EXEC_NETWORK: "true" } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).key).toBe("API_SERVER_KEY");
    expect((thrown as Error).message).toMatch(/as the owner.*set API_SERVER_KEY/s);
  });

  it("starts with a key, with the API server off, or with the network off", () => {
    const key = "k".repeat(32);
    const base = { HERALD_HOME: home, HERALD_EXEC_NETWORK: "true" };
    expect(loadConfig({ env: { ...base, API_SERVER_KEY: key } }).exec.networkAllowed).toBe(true);
    expect(loadConfig({ env: { ...base, API_SERVER_ENABLED: "false" } }).apiServer.enabled).toBe(false);
    expect(loadConfig({ env: { HERALD_HOME: home } }).exec.networkAllowed).toBe(false);
  });
});

// Why: a command in a sandbox with the network reaches a server listening on the host's 127.0.0.1.
describe("a sandboxed command with the network allowed", () => {
  const ws = tempWorkspace("telegram:1@sandbox-network");
  const backend = new SandboxBackend({ networkAllowed: true });
  let server: Server;
  let hits = 0;
  beforeAll(async () => {
    await backend.prepare(ws);
    server = createServer((_req, res) => {
      hits++;
      res.end("reached");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await backend.close();
    ws.cleanup();
    await new Promise((resolve) => server.close(resolve));
  });

  it("reaches a server on the host's loopback (what the refusal above protects the API from)", async () => {
    const { port } = server.address() as AddressInfo;
    const script = `import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/').read().decode())`;
    const result = await runCommand(backend, ws, { command: `python3 -c "${script}"`, timeoutMs: 20_000 });
    expect(result.stdout.trim()).toBe("reached");
    expect(hits).toBe(1);
  });
});
