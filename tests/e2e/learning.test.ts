/**
 * Memory, skills and the learning loop through the whole gateway: a chat adapter at the PlatformAdapter
 * boundary, the real runner, queue, state, agent loop and tools, and the scripted fake model.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { messageText } from "../fakes/llm/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let chat: FakeChatAdapter;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(env: Record<string, string> = {}) {
  harness = await startHarness({
    env: { GATEWAY_ALLOWED_USERS: "fakechat:alice", ...env },
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
  });
  return harness;
}

/** The system prompt of a request, without the line stating the hour (it changes on the hour). */
function systemPrompt(request: FakeLlmRequest | undefined): string {
  const system = request?.messages.find((m) => m.role === "system");
  return messageText(system).replace(/^It is .*$/m, "");
}

function toolResults(request: FakeLlmRequest | undefined): string[] {
  return (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => messageText(m));
}

function lastUserText(request: FakeLlmRequest | undefined): string {
  return messageText([...(request?.messages ?? [])].reverse().find((m) => m.role === "user"));
}

/** Sends a message and waits for the reply count to reach `replies`. */
async function say(text: string, replies: number): Promise<string[]> {
  await chat.inject({ text });
  return chat.waitForTexts(replies);
}

const skillMd = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

describe("memory", () => {
  it("saves with the memory tool; the prompt snapshot stays the same within a session and shows the write in the next", async () => {
    const h = await start();
    h.llm.script(
      {
        toolCalls: [
          {
            name: "memory",
            arguments: { action: "add", target: "user", content: "Alice drinks oolong tea." },
          },
        ],
      },
      { text: "Noted." },
    );
    expect(await say("I only drink oolong", 1)).toEqual(["Noted."]);
    expect(toolResults(h.llm.requests[1])[0]).toMatch(
      /^Saved\. It will be in your prompt from the next session on/,
    );
    expect(readFileSync(join(h.homeDir, "memories", "USER.md"), "utf8")).toContain(
      "Alice drinks oolong tea.",
    );

    await say("what do I drink?", 2);
    const first = systemPrompt(h.llm.requests[0]);
    expect(systemPrompt(h.llm.requests[2])).toBe(first);
    expect(first).not.toContain("oolong");

    expect((await say("/new", 3))[2]).toMatch(/new session/i);
    await say("hello again", 4);
    const next = systemPrompt(h.llm.requests[3]);
    expect(next).toContain("## What you know about the user");
    expect(next).toContain("Alice drinks oolong tea.");
  });

  it("refuses a write over the budget with a message telling the model to consolidate", async () => {
    const h = await start({ HERALD_USER_CHARS: "40" });
    h.llm.script(
      {
        toolCalls: [
          {
            name: "memory",
            arguments: {
              action: "add",
              target: "user",
              content: "Alice works at a tea importer in Hamburg and likes brief answers.",
            },
          },
        ],
      },
      { text: "ok" },
    );
    await say("remember where I work", 1);
    const [result] = toolResults(h.llm.requests[1]);
    expect(result).toMatch(/^error: refused: USER.md would hold 65 of its 40 characters/);
    expect(result).toMatch(/Consolidate first/);
    expect(existsSync(join(h.homeDir, "memories", "USER.md"))).toBe(false);
  });

  it("refuses to store a secret", async () => {
    const h = await start();
    h.llm.script(
      {
        toolCalls: [
          {
            name: "memory",
            arguments: {
              action: "add",
              target: "memory",
              content: "Deploy token: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            },
          },
        ],
      },
      { text: "ok" },
    );
    await say("remember my deploy token", 1);
    expect(toolResults(h.llm.requests[1])[0]).toMatch(
      /^error: refused: .*GitHub token.*Never store credentials/,
    );
    expect(existsSync(join(h.homeDir, "memories", "MEMORY.md"))).toBe(false);
  });
});

describe("skills", () => {
  it("lists names and descriptions in the prompt, and skill_view loads a reference file but not a path outside", async () => {
    const h = await start();
    h.llm.script(
      {
        toolCalls: [
          { name: "skill_view", arguments: { name: "web-research", file: "references/checklist.md" } },
          { name: "skill_view", arguments: { name: "web-research", file: "../../../app/config.ts" } },
        ],
      },
      { text: "done" },
    );
    await say("research oolong prices", 1);
    const prompt = systemPrompt(h.llm.requests[0]);
    expect(prompt).toContain("## Skills");
    expect(prompt).toMatch(/^- web-research: Research a question from several sources/m);
    expect(prompt).toMatch(/^- daily-briefing: /m);
    expect(prompt).toMatch(/^- incident-summary: /m);
    expect(prompt).not.toContain("Restate the question"); // bodies load on demand only
    const tools = (h.llm.requests[0]!.tools ?? []).map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(["memory", "skills_list", "skill_view", "skill_manage"]));

    const [checklist, outside] = toolResults(h.llm.requests[1]);
    expect(checklist).toContain("# Research checklist");
    expect(outside).toMatch(/^error: refused: '\.\.\/\.\.\/\.\.\/app\/config\.ts' leaves the skill's folder/);
  });

  it("skill_manage: a created skill is listed the next turn, patched, rolled back, and in the next session's prompt", async () => {
    const h = await start();
    const content = skillMd(
      "tea-order",
      "Order tea from the usual shop.",
      "1. Open the shop.\n2. Order 100 g oolong.",
    );
    h.llm.script(
      { toolCalls: [{ name: "skill_manage", arguments: { action: "create", name: "tea-order", content } }] },
      { text: "Saved a skill." },
    );
    await say("save how we order tea", 1);
    expect(toolResults(h.llm.requests[1])[0]).toMatch(/^Created skill tea-order/);

    h.llm.script(
      { toolCalls: [{ name: "skills_list", arguments: {} }] },
      {
        toolCalls: [
          {
            name: "skill_manage",
            arguments: {
              action: "patch",
              name: "tea-order",
              old_text: "100 g oolong",
              new_text: "200 g oolong",
            },
          },
        ],
      },
      { toolCalls: [{ name: "skill_view", arguments: { name: "tea-order" } }] },
      { toolCalls: [{ name: "skill_manage", arguments: { action: "rollback", name: "tea-order" } }] },
      { toolCalls: [{ name: "skill_view", arguments: { name: "tea-order" } }] },
      { text: "done" },
    );
    await say("order more tea", 2);
    // This turn's five tool results (the session's earlier ones come first).
    const results = toolResults(h.llm.requests.at(-1)).slice(-5);
    expect(results[0]).toMatch(/^- tea-order: Order tea from the usual shop\. \(yours\)$/m);
    expect(results[1]).toMatch(/^Patched SKILL.md of tea-order/);
    expect(results[2]).toContain("2. Order 200 g oolong.");
    expect(results[3]).toMatch(/^Rolled tea-order back to the previous version/);
    expect(results[4]).toContain("2. Order 100 g oolong.");
    // Within this session the prompt's skills index is the snapshot from its start.
    expect(systemPrompt(h.llm.requests.at(-1))).not.toContain("tea-order");

    await say("/new", 3);
    await say("hi", 4);
    expect(systemPrompt(h.llm.requests.at(-1))).toMatch(/^- tea-order: Order tea from the usual shop\.$/m);
  });

  it("/skills lists them, and /<skill> args runs a turn with the skill loaded", async () => {
    const h = await start();
    const [list] = await say("/skills", 1);
    expect(list).toMatch(/^\/web-research — Research a question/m);
    expect(h.llm.requests).toHaveLength(0);

    await say("/web-research oolong prices in 2024", 2);
    const input = lastUserText(h.llm.requests[0]);
    expect(input).toMatch(/^The user invoked the skill "web-research"/);
    expect(input).toContain("Restate the question in one line");
    expect(input).toContain("references/checklist.md");
    expect(input).toMatch(/Request: oolong prices in 2024$/);
    await expect.poll(() => h.gateway.learning.skills.usage()["web-research"]?.uses).toBe(1);
  });

  it("reports a broken SKILL.md with its file and field and skips it; the others still work", async () => {
    const h = await start();
    const skillsDir = join(h.homeDir, "skills");
    mkdirSync(join(skillsDir, "broken"), { recursive: true });
    writeFileSync(join(skillsDir, "broken", "SKILL.md"), "---\nname: broken\nversion: 1\n---\nSteps.\n");
    mkdirSync(join(skillsDir, "good-one"), { recursive: true });
    writeFileSync(
      join(skillsDir, "good-one", "SKILL.md"),
      skillMd("good-one", "A working skill.", "1. Work."),
    );

    const [list] = await say("/skills", 1);
    expect(list).toMatch(/^\/good-one — A working skill\.$/m);
    expect(list).toContain("Skipped 1 broken skill:");
    expect(list).toContain(`${join(skillsDir, "broken", "SKILL.md")}: description is required`);

    await say("hi", 2);
    const prompt = systemPrompt(h.llm.requests[0]);
    expect(prompt).toContain("- good-one: A working skill.");
    expect(prompt).not.toContain("broken");
  });
});

describe("the learning loop", () => {
  it("after a turn with many tool calls, a background review saves a skill without delaying the reply", async () => {
    const h = await start({ HERALD_LEARNING_MODEL: "review-model" });
    const list = { name: "skills_list", arguments: {} };
    h.llm.script({ toolCalls: [list, list, list, list, list] }, { text: "Here is your weekly report." });
    const content = skillMd(
      "weekly-report",
      "Write the weekly sales report from the shop exports.",
      "1. Export the sales CSV.\n2. Sum by product.\n3. Post the table.",
    );
    h.llm.script(
      // The review's first model call is held open while the user's reply goes out.
      { model: "review-model", delayMs: 2500, toolCalls: [list] },
      {
        model: "review-model",
        toolCalls: [
          { name: "skill_manage", arguments: { action: "create", name: "weekly-report", content } },
        ],
      },
      { model: "review-model", text: "Created skill weekly-report." },
    );

    expect(await say("make the weekly report", 1)).toEqual(["Here is your weekly report."]);
    // The reply is out; the review has not finished (its first model answer is still held).
    expect(h.gateway.learning.skills.find("weekly-report")).toBeUndefined();
    await h.llm.waitForRequests(3);
    expect(h.gateway.learning.skills.find("weekly-report")).toBeUndefined();

    const review = h.llm.requests[2]!;
    expect(review.model).toBe("review-model");
    expect((review.tools ?? []).map((t) => t.function.name).sort()).toEqual([
      "memory",
      "skill_manage",
      "skill_view",
      "skills_list",
    ]);
    expect(systemPrompt(review)).toContain("learning reviewer");
    expect(lastUserText(review)).toContain("[user] make the weekly report");
    expect(lastUserText(review)).toContain("[assistant calls skills_list]");

    await h.gateway.learning.reviewer!.idle();
    expect(h.gateway.learning.skills.find("weekly-report")?.meta.description).toBe(
      "Write the weekly sales report from the shop exports.",
    );
    const log = readFileSync(join(h.homeDir, "logs", "learning", "reviews.jsonl"), "utf8");
    expect(JSON.parse(log.trim())).toMatchObject({
      reason: "tool-calls",
      changes: [
        { tool: "skill_manage", ok: true, result: expect.stringMatching(/^Created skill weekly-report/) },
      ],
    });
    expect(chat.texts()).toEqual(["Here is your weekly report."]);
  });

  it("reviews a session when it is reset, and may save a memory", async () => {
    const h = await start({ HERALD_LEARNING_MODEL: "review-model", HERALD_LEARNING_RESET_MIN_TURNS: "2" });
    await say("I'm Alice, I run a tea shop", 1);
    await say("keep answers short please", 2);
    h.llm.script(
      {
        model: "review-model",
        toolCalls: [
          {
            name: "memory",
            arguments: {
              action: "add",
              target: "user",
              content: "Alice runs a tea shop; wants short answers.",
            },
          },
        ],
      },
      { model: "review-model", text: "Saved one memory." },
    );
    await say("/new", 3);
    await h.llm.waitForRequests(3);
    await h.gateway.learning.reviewer!.idle();
    expect(h.llm.requests[2]!.model).toBe("review-model");
    expect(readFileSync(join(h.homeDir, "memories", "USER.md"), "utf8")).toContain("Alice runs a tea shop");
  });

  it("does not review short sessions or quiet turns", async () => {
    const h = await start();
    h.llm.script({ toolCalls: [{ name: "skills_list", arguments: {} }] }, { text: "one tool" });
    await say("hello", 1);
    await say("/new", 2);
    await say("again", 3);
    await h.gateway.learning.reviewer!.idle();
    expect(h.llm.requests).toHaveLength(3);
  });
});
