/**
 * A cloud backend through the whole gateway: config from the environment (DAYTONA_API_KEY,
 * DAYTONA_API_URL), the fake LLM calling terminal, write_file and read_file, the Daytona SDK talking to
 * the fake Daytona API; `/usage` shows the sandbox's hours and price; `/new` deletes the sandbox.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/workspaces.js";
import { startFakeDaytona } from "../fakes/daytona/index.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { chat, startHarness } from "../helpers/gateway-harness.js";

let fake: RunningFake & { apiUrl: string };
beforeAll(async () => {
  fake = await startFakeDaytona({ apiKey: "dtn_gateway_key" });
});
afterAll(async () => {
  await fake?.stop();
});

describe("a Daytona sandbox through the gateway", () => {
  it("terminal, write_file and read_file run in the session's sandbox; /usage prices it; /new deletes it", async () => {
    const remoteRoot = mkdtempSync(join(tmpdir(), "herald-daytona-"));
    const harness = await startHarness({
      env: { DAYTONA_API_KEY: "dtn_gateway_key", DAYTONA_API_URL: fake.apiUrl },
      configYaml: [
        "exec:",
        "  backend: daytona",
        "  cloud:",
        `    workdir: ${remoteRoot}/{workspace}`,
        "  daytona:",
        "    cost_per_hour: 0.09",
        "",
      ].join("\n"),
    });
    try {
      harness.llm.script(
        {
          toolCalls: [
            { name: "terminal", arguments: { command: "echo from-the-sandbox > made.txt; uname -s" } },
          ],
        },
        { toolCalls: [{ name: "write_file", arguments: { path: "notes/plan.txt", content: "step one\n" } }] },
        { toolCalls: [{ name: "read_file", arguments: { path: "made.txt" } }] },
        { text: "done" },
      );
      const reply = await chat(harness, "go", { sessionId: "cloud" });
      expect(reply.text).toBe("done");
      const results = harness.llm.requests
        .at(-1)
        ?.messages.filter((m) => m.role === "tool")
        .map((m) => String(m.content ?? ""));
      expect(results?.[0]).toContain("Linux");
      expect(results?.[2]).toContain("from-the-sandbox");
      const name = workspaceDirName("api:dm:cloud");
      expect(readFileSync(join(remoteRoot, name, "notes", "plan.txt"), "utf8")).toBe("step one\n");
      expect(existsSync(join(harness.homeDir, "workspaces", name, "notes"))).toBe(false);
      const sandboxes = fake.host.alive();
      expect(sandboxes).toHaveLength(1);
      expect(fake.host.requests.some((r) => r.path.endsWith("/files/bulk-upload"))).toBe(true);

      const usage = await chat(harness, "/usage", { sessionId: "cloud" });
      expect(usage.text).toMatch(
        /daytona sandbox \(running now\): \d+ min running — \$0\.0\d+ at \$0\.09\/h/,
      );

      await chat(harness, "/new", { sessionId: "cloud" });
      const deleted = sandboxes[0]!;
      const gone = async () => {
        for (let i = 0; i < 100 && deleted.state !== "deleted"; i++)
          await new Promise((r) => setTimeout(r, 50));
        return deleted.state;
      };
      expect(await gone()).toBe("deleted");
    } finally {
      await harness.stop();
      rmSync(remoteRoot, { recursive: true, force: true });
    }
  }, 60_000);
});
