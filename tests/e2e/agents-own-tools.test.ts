/**
 * What each agent's turns are offered, over the wire: two Telegram bots (two fake Bot APIs), the second
 * routed to agent `family`, which runs its commands on the host (`exec_backend: local`) while the
 * default agent's run in the sandbox, uses no external memory (`memory_providers: false`) and has its
 * own skills folder. The model is told where each agent's commands run; the agent without providers is
 * not offered `memory_provider_query`; a plugin's command runs on its caller's agent's backend; the
 * dashboard shows each agent's skills.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import { type FakeHoncho, startFakeHoncho } from "../fakes/honcho/index.js";
import type { FakeLlmRequest } from "../fakes/llm/types.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, botSays } from "./telegram-helpers.js";

const PASSWORD = "correct horse battery";
const running = platformPerTest<FakeTelegram>();
let family: FakeTelegram | undefined;
let honcho: FakeHoncho | undefined;
afterEach(async () => {
  await family?.close();
  await honcho?.close();
  family = honcho = undefined;
});

/** A plugin whose tool runs a command with the `exec` capability. */
const PROBE = `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [
    { name: "probe_exec", description: "runs a command", parameters: z.object({ command: z.string() }),
      execute: async ({ command }, ctx) => (await ctx.exec.run(command)).stdout },
  ],
});
`;

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
  honcho = await startFakeHoncho({ apiKey: "hk" });
  const plugins = join(mkdtempSync(join(tmpdir(), "herald-plugins-")), "plugins");
  mkdirSync(join(plugins, "probe"), { recursive: true });
  writeFileSync(
    join(plugins, "probe", "plugin.json"),
    JSON.stringify({ name: "probe", version: "0.1.0", capabilities: ["exec"] }),
  );
  writeFileSync(join(plugins, "probe", "index.js"), PROBE);
  const configYaml = [
    "telegram:",
    "  accounts:",
    "    - name: family",
    `      api_root: ${family.url}`,
    "memory:",
    "  providers:",
    "    insights_ttl_s: 0",
    "agents:",
    "  - name: family",
    "    skills_dir: agents/family/skills",
    "    exec_backend: local",
    "    memory_providers: false",
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
      HERALD_PLUGINS_DIR: plugins,
      HONCHO_URL: honcho.url,
      HONCHO_API_KEY: "hk",
      DASHBOARD_PASSWORD: PASSWORD,
    },
  });
  writeSkill(join(h.homeDir, "skills"), "tax-forms", "Fill in the quarterly tax forms.");
  writeSkill(join(h.homeDir, "agents", "family", "skills"), "jam-recipe", "Make plum jam.");
  return { work, family, h };
}

/** The model requests whose last user message is `text`. */
function requestsFor(h: Harness, text: string): FakeLlmRequest[] {
  return h.llm.requests.filter((r) => {
    const users = r.messages.filter((m) => m.role === "user");
    return JSON.stringify(users.at(-1)?.content ?? "").includes(text);
  });
}

/** The description of tool `name` in a request; undefined when the request lacks the tool. */
const described = (r: FakeLlmRequest | undefined, name: string) =>
  r?.tools?.find((t) => t.function.name === name)?.function.description;

/** What the tools answered in the last request of a turn (the one after its tool calls). */
const toolResults = (h: Harness, text: string) =>
  (requestsFor(h, text).at(-1)?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

/** A form POST as the dashboard's pages send it; no redirects followed. */
function post(url: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  });
}

describe("what each agent's turns are offered", () => {
  it("tells each agent where its commands run, offers external memory only to the agent that has it, and keeps each agent's tools stable", async () => {
    const { work, family, h } = await start();
    work.userSends({ chatId: 111, fromId: 111, text: "hello work" });
    family.userSends({ chatId: 111, fromId: 111, text: "hello family" });
    await botReplies(work, 111, 1);
    await botReplies(family, 111, 1);
    const workRequest = requestsFor(h, "hello work")[0];
    const familyRequest = requestsFor(h, "hello family")[0];
    expect(described(workRequest, "terminal")).toContain("isolated (sandbox)");
    expect(described(familyRequest, "terminal")).toContain("on the host");
    expect(described(familyRequest, "terminal")).not.toContain("sandbox");
    // The file tools are the agent's backend's too (where paths are, as its commands see them).
    expect(described(familyRequest, "read_file")).toBeDefined();
    expect(described(workRequest, "memory_provider_query")).toBeDefined();
    expect(described(familyRequest, "memory_provider_query")).toBeUndefined();

    // A second turn of each agent sends the very same tools: the prompt's prefix stays cacheable.
    family.userSends({ chatId: 111, fromId: 111, text: "again family" });
    await botReplies(family, 111, 2);
    work.userSends({ chatId: 111, fromId: 111, text: "again work" });
    await botReplies(work, 111, 2);
    expect(JSON.stringify(requestsFor(h, "again family")[0]?.tools)).toBe(
      JSON.stringify(familyRequest?.tools),
    );
    expect(JSON.stringify(requestsFor(h, "again work")[0]?.tools)).toBe(JSON.stringify(workRequest?.tools));

    // The tool is not there for the family agent even when the model calls it.
    h.llm.script(
      { toolCalls: [{ name: "memory_provider_query", arguments: { query: "Where does the user live?" } }] },
      { text: "Asked." },
    );
    family.userSends({ chatId: 111, fromId: 111, text: "where do I live?" });
    await botSays(family, 111, "Asked.");
    expect(toolResults(h, "where do I live?")[0]).toMatch(/no tool named 'memory_provider_query'/);
  });

  it("runs a plugin's command on the backend and in the workspace of the calling turn's agent", async () => {
    const { work, family, h } = await start();
    const script = () =>
      h.llm.script({ toolCalls: [{ name: "probe_exec", arguments: { command: "pwd" } }] }, { text: "Ran." });
    script();
    family.userSends({ chatId: 111, fromId: 111, text: "run it for family" });
    await botSays(family, 111, "Ran.");
    const familyDir = join(
      h.homeDir,
      "agents",
      "family",
      "workspaces",
      workspaceDirName("family/telegram@family:dm:111"),
    );
    expect(toolResults(h, "run it for family")).toEqual([`${familyDir}\n`]);

    script();
    work.userSends({ chatId: 111, fromId: 111, text: "run it for work" });
    await botSays(work, 111, "Ran.");
    expect(toolResults(h, "run it for work")).toEqual(["/workspace\n"]);
  });

  it("shows and edits each agent's own skills on the dashboard's skills page", async () => {
    const { h } = await start();
    const base = `${h.apiUrl}/dashboard`;
    const loggedIn = await post(`${base}/login`, { password: PASSWORD });
    const cookie = loggedIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { cookie } });
      return { status: res.status, text: await res.text() };
    };
    const shared = await page("/knowledge");
    expect(shared.text).toContain("tax-forms");
    expect(shared.text).not.toContain("jam-recipe");
    expect(shared.text).toContain('href="/dashboard/knowledge?agent=family"');

    const own = await page("/knowledge?agent=family");
    expect(own.text).toContain("Skills of agent family");
    expect(own.text).toContain('href="/dashboard/skills/jam-recipe?agent=family"');
    expect(own.text).not.toContain("tax-forms");
    const jam = await page("/skills/jam-recipe?agent=family");
    expect(jam.status).toBe(200);
    expect(jam.text).toContain("Steps for jam-recipe");
    expect((await page("/skills/jam-recipe")).status).toBe(404);
    // An agent that is not configured shows the shared folder.
    expect((await page("/knowledge?agent=nobody")).text).toContain("tax-forms");

    // A skill made on the agent's page lands in the agent's folder.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(own.text)![1]!;
    const made = await post(
      `${base}/skills/new`,
      {
        _csrf: csrf,
        agent: "family",
        name: "bedtime-story",
        content:
          "---\nname: bedtime-story\ndescription: Tell a short bedtime story.\n---\n\nKeep it short.\n",
      },
      cookie,
    );
    expect(made.status).toBe(303);
    expect(made.headers.get("location")).toContain("?agent=family");
    expect(existsSync(join(h.homeDir, "agents", "family", "skills", "bedtime-story", "SKILL.md"))).toBe(true);
    expect(existsSync(join(h.homeDir, "skills", "bedtime-story"))).toBe(false);
  });
});
