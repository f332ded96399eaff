/**
 * The file tools through the whole gateway (API server, runner, agent loop): the scripted model writes,
 * patches, reads and searches files in its session's workspace and reads the results back.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { makePdf } from "../helpers/document-fixtures.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const toolResults = (request: FakeLlmRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));

async function ask(h: Harness, text: string, sessionId: string): Promise<string> {
  const reply = await chat(h, text, { sessionId });
  expect(reply.status).toBe(200);
  return reply.text;
}

describe("file tools", () => {
  it("writes, refuses an ambiguous patch, patches, reads back and searches", async () => {
    harness = await startHarness();
    harness.llm.script(
      {
        toolCalls: [
          { name: "write_file", arguments: { path: "src/app.txt", content: "alpha\nbeta\nalpha\n" } },
        ],
      },
      {
        toolCalls: [
          { name: "patch", arguments: { path: "src/app.txt", old_string: "alpha", new_string: "ALPHA" } },
        ],
      },
      {
        toolCalls: [
          {
            name: "patch",
            arguments: { path: "/workspace/src/app.txt", old_string: "beta", new_string: "BETA" },
          },
        ],
      },
      { toolCalls: [{ name: "read_file", arguments: { path: "src/app.txt" } }] },
      { toolCalls: [{ name: "search_files", arguments: { pattern: "BETA", content: true } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "/etc/passwd" } }] },
      { text: "done" },
    );
    expect(await ask(harness, "edit a file", "files-1")).toBe("done");
    const results = toolResults(harness.llm.requests.at(-1)!);
    expect(results[1]).toMatch(/occurs 2 times .*lines 1, 3/);
    expect(results[1]).toMatch(/^error:/);
    expect(results[3]).toMatch(/1\s+alpha\n\s*2\s+BETA\n\s*3\s+alpha/);
    expect(results[4]).toContain("src/app.txt");
    expect(results[5]).toMatch(/^error: .*outside the workspace/);
  });

  it("pages a large file and reads a PDF's text", async () => {
    harness = await startHarness();
    const dir = join(harness.homeDir, "workspaces", workspaceDirName("api:dm:files-2"));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "big.log"), Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join("\n"));
    writeFileSync(join(dir, "report.pdf"), makePdf([["Quarterly revenue grew 12 percent"]]));
    harness.llm.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "big.log" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "big.log", offset: 4990 } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "report.pdf" } }] },
      { text: "read" },
    );
    expect(await ask(harness, "read them", "files-2")).toBe("read");
    const [first, last, pdf] = toolResults(harness.llm.requests.at(-1)!);
    expect(first).toContain("line 2000");
    expect(first).not.toContain("line 2001\n");
    expect(first).toMatch(/offset=2001/);
    expect(last).toContain("line 5000");
    expect(pdf).toContain("Quarterly revenue grew 12 percent");
  });
});
