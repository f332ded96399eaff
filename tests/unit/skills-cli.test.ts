/**
 * `herald skills list|show|install|curate` run in-process through commander, on a temp HERALD_HOME.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { registerSkillsCommands } from "../../app/cli/skills.js";

let home: string;
let printed: string[];
const savedHome = process.env["HERALD_HOME"];

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "herald-cli-skills-"));
  process.env["HERALD_HOME"] = home;
  printed = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    printed.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    printed.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  if (savedHome === undefined) delete process.env["HERALD_HOME"];
  else process.env["HERALD_HOME"] = savedHome;
  rmSync(home, { recursive: true, force: true });
});

async function herald(...args: string[]): Promise<string> {
  printed = [];
  const program = new Command().exitOverride();
  registerSkillsCommands(program);
  await program.parseAsync(["skills", ...args], { from: "user" });
  return printed.join("");
}

describe("herald skills", () => {
  it("--agent <name> works on that agent's skills_dir, and names the agents for an unknown one", async () => {
    writeFileSync(join(home, "config.yaml"), "agents:\n  - name: family\n    skills_dir: family-skills\n");
    const source = join(home, "src", "jam");
    mkdirSync(source, { recursive: true });
    writeFileSync(join(source, "SKILL.md"), "---\nname: jam\ndescription: Make jam.\n---\n\nBoil.\n");
    expect(await herald("--agent", "family", "install", source)).toMatch(/^Installed jam to /);
    expect(existsSync(join(home, "family-skills", "jam", "SKILL.md"))).toBe(true);
    expect(existsSync(join(home, "skills", "jam"))).toBe(false);
    expect(await herald("list", "--agent", "family")).toContain("jam");
    expect(await herald("list")).not.toContain("jam");
    expect(await herald("--agent", "work", "list")).toMatch(
      /no agent 'work'; the agents are default, family/,
    );
    process.exitCode = undefined;
  });

  it("installs a skill folder, lists it beside the bundled ones, and shows its files", async () => {
    const source = join(home, "src", "tea-order");
    mkdirSync(join(source, "templates"), { recursive: true });
    writeFileSync(
      join(source, "SKILL.md"),
      "---\nname: tea-order\ndescription: Order tea.\n---\n\n1. Order.\n",
    );
    writeFileSync(join(source, "templates", "order.md"), "100 g {tea}\n");

    expect(await herald("install", source)).toMatch(/^Installed tea-order to /);
    expect(existsSync(join(home, "skills", "tea-order", "templates", "order.md"))).toBe(true);
    expect(await herald("install", source)).toMatch(/exists already; use --force/);
    expect(process.exitCode).toBe(1);
    process.exitCode = undefined;

    const list = await herald("list");
    expect(list).toMatch(/^tea-order {2}\(user, 0 uses\)\n {2}Order tea\.$/m);
    expect(list).toMatch(/^web-research {2}\(bundled, v1\.0\.0, 0 uses\)$/m);
    expect(await herald("show", "tea-order", "templates/order.md")).toBe("100 g {tea}\n\n");
    expect(process.exitCode).toBeUndefined();
  });

  it("lists a broken SKILL.md with its file and field and exits 1", async () => {
    mkdirSync(join(home, "skills", "broken"), { recursive: true });
    writeFileSync(join(home, "skills", "broken", "SKILL.md"), "---\nname: broken\n---\nbody\n");
    const list = await herald("list");
    expect(list).toContain(`${join(home, "skills", "broken", "SKILL.md")}: description is required`);
    expect(list).toContain("web-research");
    expect(process.exitCode).toBe(1);
  });

  it("curate writes a report under logs/curator", async () => {
    const out = await herald("curate", "--dry-run");
    expect(out).toMatch(/^Graded:\n {2}D daily-briefing \(0 uses\)/);
    expect(readdirSync(join(home, "logs", "curator"))).toHaveLength(1);
  });
});
