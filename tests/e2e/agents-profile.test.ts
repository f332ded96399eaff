/**
 * Each agent's own skills, execution backend and workspaces, over the wire: two Telegram bots (two fake
 * Bot APIs), the second a bot account routed to agent `family`, which has its own skills folder
 * (`skills_dir`), runs its commands on the host (`exec_backend: local`) while the default agent's run
 * in the sandbox, and keeps its workspaces under its own `workspace_root`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import type { FakeLlmRequest } from "../fakes/llm/types.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, botSays } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let family: FakeTelegram | undefined;
afterEach(async () => {
  await family?.close();
  family = undefined;
});

/** Writes a skill into `dir`. */
function writeSkill(dir: string, name: string, description: string): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    join(dir, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nSteps for ${name}.\n`,
  );
}

/** The gateway with the default bot (work) and the `family` bot account routed to agent `family`. */
async function start() {
  const work = running.trackFake(await startFakeTelegram());
  family = await startFakeTelegram({ token: "7000000002:FAMILY-token_for_fake", username: "hearth_bot" });
  const configYaml = [
    "telegram:",
    "  accounts:",
    "    - name: family",
    `      api_root: ${family.url}`,
    "agents:",
    "  - name: family",
    "    skills_dir: agents/family/skills",
    "    exec_backend: local",
    "    workspace_root: family-workspaces",
    "routes:",
    "  - agent: family",
    "    platform: telegram@family",
    "",
  ].join("\n");
  const h = await running.startHarness({
    configYaml,
    env: {
      TELEGRAM_BOT_TOKEN: work.token,
      TELEGRAM_API_ROOT: work.url,
      TELEGRAM_FAMILY_BOT_TOKEN: family.token,
      TELEGRAM_ALLOWED_USERS: "111",
      HERALD_TOOLS_LAZY: "false",
      HERALD_LEARNING_ENABLED: "false",
    },
  });
  writeSkill(join(h.homeDir, "skills"), "tax-forms", "Fill in the quarterly tax forms.");
  writeSkill(
    join(h.homeDir, "agents", "family", "skills"),
    "jam-recipe",
    "Make plum jam with grandma's recipe.",
  );
  return { work, family, h };
}

/** The model requests whose last user message is `text`. */
function requestsFor(h: Harness, text: string): FakeLlmRequest[] {
  return h.llm.requests.filter((r) => {
    const users = r.messages.filter((m) => m.role === "user");
    return JSON.stringify(users.at(-1)?.content ?? "").includes(text);
  });
}

const systemOf = (r: FakeLlmRequest) => String(r.messages[0]?.content ?? "");
/** What the tools answered in the last request of a turn (the one after its tool calls). */
const toolResults = (h: Harness, text: string) =>
  (requestsFor(h, text).at(-1)?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));
const command = (text: string) => ({
  entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }],
});

describe("each agent's skills, exec backend and workspaces", () => {
  it("lists, shows and writes an agent's skills only in its own chats", async () => {
    const { work, family, h } = await start();
    work.userSends({ chatId: 111, fromId: 111, text: "hello work" });
    family.userSends({ chatId: 111, fromId: 111, text: "hello family" });
    await botReplies(work, 111, 1);
    await botReplies(family, 111, 1);
    // The skills index of each prompt: the agent's own folder (and the bundled skills).
    expect(systemOf(requestsFor(h, "hello family")[0]!)).toContain("jam-recipe");
    expect(systemOf(requestsFor(h, "hello family")[0]!)).not.toContain("tax-forms");
    expect(systemOf(requestsFor(h, "hello work")[0]!)).toContain("tax-forms");
    expect(systemOf(requestsFor(h, "hello work")[0]!)).not.toContain("jam-recipe");

    // skills_list and skill_view in the family chat: its skill, never the shared folder's.
    h.llm.script(
      {
        toolCalls: [
          { name: "skills_list", arguments: {} },
          { name: "skill_view", arguments: { name: "tax-forms" } },
          { name: "skill_view", arguments: { name: "jam-recipe" } },
        ],
      },
      { text: "Looked." },
    );
    family.userSends({ chatId: 111, fromId: 111, text: "which skills do you have?" });
    await botSays(family, 111, "Looked.");
    const [list, taxes, jam] = toolResults(h, "which skills do you have?");
    expect(list).toContain("jam-recipe");
    expect(list).not.toContain("tax-forms");
    expect(taxes).toMatch(/error/i);
    expect(jam).toContain("Steps for jam-recipe");

    // /skills in each chat.
    family.userSends({ chatId: 111, fromId: 111, text: "/skills", extra: command("/skills") });
    const familySkills = (await botReplies(family, 111, 3))[2];
    expect(familySkills).toContain("/jam-recipe");
    expect(familySkills).not.toContain("/tax-forms");
    work.userSends({ chatId: 111, fromId: 111, text: "/skills", extra: command("/skills") });
    const workSkills = (await botReplies(work, 111, 2))[1];
    expect(workSkills).toContain("/tax-forms");
    expect(workSkills).not.toContain("/jam-recipe");

    // A skill the family agent writes lands in its folder.
    h.llm.script(
      {
        toolCalls: [
          {
            name: "skill_manage",
            arguments: {
              action: "create",
              name: "bedtime-story",
              content:
                "---\nname: bedtime-story\ndescription: Tell a short bedtime story.\n---\n\nKeep it short.\n",
            },
          },
        ],
      },
      { text: "Saved." },
    );
    family.userSends({ chatId: 111, fromId: 111, text: "save how to tell a bedtime story" });
    await botSays(family, 111, "Saved.");
    expect(existsSync(join(h.homeDir, "agents", "family", "skills", "bedtime-story", "SKILL.md"))).toBe(true);
    expect(existsSync(join(h.homeDir, "skills", "bedtime-story"))).toBe(false);
  });

  it("runs each agent's commands on its backend, its files under its own workspace root", async () => {
    const { work, family, h } = await start();
    const script = (content: string) =>
      h.llm.script(
        { toolCalls: [{ name: "write_file", arguments: { path: "note.txt", content } }] },
        { toolCalls: [{ name: "terminal", arguments: { command: "pwd && cat note.txt" } }] },
        { text: "Written." },
      );
    script("from family");
    family.userSends({ chatId: 111, fromId: 111, text: "write a family note" });
    await botSays(family, 111, "Written.");
    const familyDir = join(h.homeDir, "family-workspaces", workspaceDirName("family/telegram@family:dm:111"));
    expect(readFileSync(join(familyDir, "note.txt"), "utf8")).toBe("from family");
    // exec_backend: local runs on the host: the command's working directory is the host folder.
    const [, familyRun] = toolResults(h, "write a family note");
    expect(familyRun).toContain(familyDir);
    expect(familyRun).toContain("from family");
    // The checkpoint before the write was taken of the workspace under the agent's root.
    const before = family.botMessages(111).length;
    family.userSends({ chatId: 111, fromId: 111, text: "/checkpoints", extra: command("/checkpoints") });
    const listed = (await botReplies(family, 111, before + 1)).at(-1);
    expect(listed).toMatch(/Checkpoints of this workspace[\s\S]*1\. /);

    script("from work");
    work.userSends({ chatId: 111, fromId: 111, text: "write a work note" });
    await botSays(work, 111, "Written.");
    const workDir = join(h.homeDir, "workspaces", workspaceDirName("telegram:dm:111"));
    expect(readFileSync(join(workDir, "note.txt"), "utf8")).toBe("from work");
    // The default agent's sandbox shows its workspace at /workspace.
    const [, workRun] = toolResults(h, "write a work note");
    expect(workRun).toContain("/workspace");
    expect(workRun).not.toContain(h.homeDir);
    // Neither agent's file is in the other's root.
    expect(existsSync(join(h.homeDir, "workspaces", workspaceDirName("family/telegram@family:dm:111")))).toBe(
      false,
    );
    expect(readFileSync(join(familyDir, "note.txt"), "utf8")).toBe("from family");
  });
});
