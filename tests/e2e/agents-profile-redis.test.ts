/**
 * Each agent's skills, exec backend and workspace root on Redis, through real `herald gateway` and
 * `herald worker` processes with the same config.yaml in their own HERALD_HOMEs: the worker reads a
 * turn's agent from its session key, so agent `family` (routed by chat) runs its commands on the host
 * (`exec_backend: local`) under its own `workspace_root`, while the default agent's run in the
 * sandbox; its `skills_list` (over the gateway's state API) lists its own skills folder.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { clusterPerTest, lastUser } from "../helpers/cluster-per-test.js";
import { eventually } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

const CONFIG = [
  "agents:",
  "  - name: family",
  "    skills_dir: family-skills",
  "    exec_backend: local",
  "    workspace_root: family-ws",
  "routes:",
  "  - agent: family",
  '    chat: "telegram:222"',
  "",
].join("\n");

/** Writes a skill into `dir`. */
function writeSkill(dir: string, name: string, description: string): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    join(dir, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${description}\n---\n\nSteps.\n`,
  );
}

const toolResults = (request: FakeLlmRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("each agent's own parts on Redis workers", () => {
  it("runs the family agent's turns on its backend, workspace root and skills, the default agent's on its own", async () => {
    const { c, tg, model } = await cluster.start({ startGateway: false, allowedUsers: "111,222" });
    mkdirSync(c.home, { recursive: true });
    writeFileSync(join(c.home, "config.yaml"), CONFIG);
    writeSkill(join(c.home, "skills"), "tax-forms", "Fill in the quarterly tax forms.");
    writeSkill(join(c.home, "family-skills"), "jam-recipe", "Make plum jam.");
    const workerHome = join(c.home, "worker-home");
    mkdirSync(workerHome, { recursive: true });
    writeFileSync(join(workerHome, "config.yaml"), CONFIG);
    model.setDefault((request) => {
      const text = lastUser(request.messages);
      const done = toolResults(request).length;
      const steps = [
        { name: "write_file", arguments: { path: "note.txt", content: `note of ${text}` } },
        { name: "terminal", arguments: { command: "pwd" } },
        { name: "skills_list", arguments: {} },
      ];
      const step = steps[done];
      if (step) return { toolCalls: [step] };
      return { text: `done: ${toolResults(request).join(" | ")}` };
    });
    await c.startGateway();
    await c.startWorker("fake-model", 1, { home: workerHome });

    tg.userSends({ chatId: 222, fromId: 222, text: "family" });
    tg.userSends({ chatId: 111, fromId: 111, text: "work" });
    const reply = (chatId: number) => tg.botMessages(chatId).find((m) => m.text?.startsWith("done:"))?.text;
    await eventually(
      () => Boolean(reply(222) && reply(111)),
      () => `no answers: ${JSON.stringify([tg.botMessages(111), tg.botMessages(222)])}\n${c.output()}`,
      20_000,
    );

    // The family agent: its files under its root on the worker, its commands on the worker's host.
    const familyDir = join(workerHome, "family-ws", workspaceDirName("family/telegram:dm:222"));
    expect(readFileSync(join(familyDir, "note.txt"), "utf8")).toBe("note of family");
    expect(reply(222)).toContain(familyDir);
    expect(reply(222)).toContain("jam-recipe");
    expect(reply(222)).not.toContain("tax-forms");

    // The default agent: the sandbox, its workspaces where they always were, the shared skills.
    const workDir = join(workerHome, "workspaces", workspaceDirName("telegram:dm:111"));
    expect(readFileSync(join(workDir, "note.txt"), "utf8")).toBe("note of work");
    expect(reply(111)).toContain("/workspace");
    expect(reply(111)).not.toContain(workerHome);
    expect(reply(111)).toContain("tax-forms");
    expect(reply(111)).not.toContain("jam-recipe");
  }, 60_000);
});
