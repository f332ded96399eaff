/**
 * `herald skills install|update|remove` with remote sources, in-process through commander: a real git
 * repository (a bare one over file://, pushed to between installs), and an HTTP server serving .tar.gz
 * and .zip archives built with Python's tarfile and zipfile, malicious ones included (a path leaving
 * the folder, a symbolic link, a huge file, an executable script). Archives come through the guarded
 * fetch, which reaches this loopback server only with `HERALD_WEB_ALLOW_PRIVATE=true`.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { registerSkillsCommands } from "../../app/cli/skills.js";
import { parseSkillSource } from "../../skills/index.js";

let home: string;
let work: string;
let printed: string[];
const saved = { home: process.env["HERALD_HOME"], priv: process.env["HERALD_WEB_ALLOW_PRIVATE"] };

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "herald-skills-remote-"));
  work = join(home, "work");
  mkdirSync(work);
  process.env["HERALD_HOME"] = join(home, "herald");
  delete process.env["HERALD_WEB_ALLOW_PRIVATE"];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    printed.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  for (const [key, value] of [
    ["HERALD_HOME", saved.home],
    ["HERALD_WEB_ALLOW_PRIVATE", saved.priv],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(home, { recursive: true, force: true });
});

/** Runs `herald skills …`; resolves with what it printed, or rejects with its error. */
async function herald(...args: string[]): Promise<string> {
  printed = [];
  const program = new Command().exitOverride();
  registerSkillsCommands(program);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    printed.push(String(chunk));
    return true;
  });
  await program.parseAsync(["skills", ...args], { from: "user" });
  return printed.join("");
}

/** Runs a command that must fail: exit code 1 and `why` in what it printed. */
async function fails(args: string[], why: RegExp): Promise<void> {
  expect(await herald(...args)).toMatch(why);
  expect(process.exitCode).toBe(1);
  process.exitCode = undefined;
}

const skillMd = (name: string, step: string) =>
  `---\nname: ${name}\ndescription: Order tea.\n---\n\n1. ${step}\n`;
const installed = (name: string, file = "SKILL.md") => join(home, "herald", "skills", name, file);
const sources = () => JSON.parse(readFileSync(join(home, "herald", "skills", ".sources.json"), "utf8"));

function gitRepo(): { url: string; commit: (message: string) => string } {
  const bare = join(home, "repo.git");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], {
      cwd: work,
      encoding: "utf8",
    }).trim();
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", bare]);
  git("init", "-q", "-b", "main");
  git("remote", "add", "origin", bare);
  return {
    url: `file://${bare}`,
    commit(message) {
      git("add", "-A");
      git("commit", "-q", "-m", message);
      git("push", "-q", "origin", "main");
      return git("rev-parse", "HEAD");
    },
  };
}

function writeSkill(dir: string, name: string, step: string) {
  mkdirSync(join(dir, "templates"), { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), skillMd(name, step));
  writeFileSync(join(dir, "templates", "order.md"), "100 g {tea}\n");
}

describe("skills from a git repository", () => {
  it("shows, installs with the commit pinned, updates showing the diff first, and removes", async () => {
    const repo = gitRepo();
    writeSkill(join(work, "skills", "tea-order"), "tea-order", "Order green tea.");
    writeSkill(join(work, "skills", "coffee"), "coffee", "Brew.");
    const first = repo.commit("first");
    const spec = `${repo.url}//skills/tea-order`;

    // Without --yes (no terminal) it shows what it would install and changes nothing.
    const shown = await herald("install", spec);
    expect(shown).toContain("tea-order: Order tea.");
    expect(shown).toContain(`at commit ${first}`);
    expect(shown).toMatch(/SKILL\.md \(\d+ bytes\)\n\s+templates\/order\.md \(12 bytes\)/);
    expect(shown).toContain("run again with --yes");
    expect(existsSync(installed("tea-order"))).toBe(false);

    expect(await herald("install", spec, "--yes")).toMatch(/Installed tea-order to /);
    expect(readFileSync(installed("tea-order"), "utf8")).toContain("Order green tea.");
    expect(sources()["tea-order"]).toMatchObject({ spec, kind: "git", pin: first });

    expect(await herald("update", "tea-order")).toMatch(/up to date/);
    writeSkill(join(work, "skills", "tea-order"), "tea-order", "Order black tea.");
    const second = repo.commit("second");
    const preview = await herald("update", "tea-order");
    expect(preview).toContain(`tea-order: ${first.slice(0, 12)} → ${second.slice(0, 12)}`);
    expect(preview).toMatch(/-1\. Order green tea\.\n\+1\. Order black tea\./);
    expect(readFileSync(installed("tea-order"), "utf8")).toContain("Order green tea.");
    await herald("update", "--yes");
    expect(readFileSync(installed("tea-order"), "utf8")).toContain("Order black tea.");
    expect(sources()["tea-order"].pin).toBe(second);

    expect(await herald("remove", "tea-order")).toBe("Removed tea-order.\n");
    expect(existsSync(installed("tea-order"))).toBe(false);
    expect(sources()["tea-order"]).toBeUndefined();
  });

  it("asks which skill when a repository holds several", async () => {
    const repo = gitRepo();
    writeSkill(join(work, "a"), "alpha", "A.");
    writeSkill(join(work, "b"), "beta", "B.");
    repo.commit("two");
    await fails(["install", `${repo.url}`, "--yes"], /several skills \(a, b\)/);
  });

  it("refuses symbolic links, and executables unless allowed", async () => {
    const repo = gitRepo();
    writeSkill(work, "linked", "L.");
    symlinkSync("/etc/passwd", join(work, "templates", "passwd.md"));
    repo.commit("link");
    await fails(["install", repo.url, "--yes"], /templates\/passwd\.md is a symbolic link/);

    rmSync(join(work, "templates", "passwd.md"));
    mkdirSync(join(work, "scripts"));
    writeFileSync(join(work, "scripts", "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(work, "scripts", "run.sh"), 0o755);
    repo.commit("script");
    await fails(["install", repo.url, "--yes"], /scripts\/run\.sh is executable/);
    expect(await herald("install", repo.url, "--yes", "--allow-executables")).toMatch(/Installed linked/);
  });
});

/** Builds an archive with Python (tarfile/zipfile) from a list of entries; returns its bytes. */
function archive(
  format: "tar.gz" | "zip",
  entries: { name: string; text?: string; link?: string; bytes?: number }[],
) {
  const out = join(home, `a-${Math.random().toString(36).slice(2)}.${format}`);
  const script = `
import io, json, sys, tarfile, zipfile
entries = json.loads(sys.argv[2])
if sys.argv[3] == "zip":
    with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
        for e in entries:
            info = zipfile.ZipInfo(e["name"])
            if e.get("link"):
                info.external_attr = (0o120777 << 16)
                z.writestr(info, e["link"])
            else:
                info.external_attr = (0o100644 << 16)
                z.writestr(info, e.get("text") or b"\\0" * e.get("bytes", 0), zipfile.ZIP_DEFLATED)
else:
    with tarfile.open(sys.argv[1], "w:gz") as t:
        for e in entries:
            info = tarfile.TarInfo(e["name"])
            if e.get("link"):
                info.type = tarfile.SYMTYPE
                info.linkname = e["link"]
                t.addfile(info)
            else:
                data = e["text"].encode() if e.get("text") else b"\\0" * e.get("bytes", 0)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
`;
  execFileSync("python3", ["-c", script, out, JSON.stringify(entries), format]);
  return readFileSync(out);
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function serve(files: Record<string, Buffer>): Promise<string> {
  server = createServer((req, res) => {
    const body = files[req.url ?? ""];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
    res.end(body);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const good = [
  { name: "tea-order-main/README.md", text: "read me" },
  { name: "tea-order-main/SKILL.md", text: skillMd("tea-order", "Order oolong.") },
  { name: "tea-order-main/templates/order.md", text: "100 g {tea}\n" },
];

describe("skills from archives over HTTP", () => {
  it("installs a .tar.gz and a .zip with their SHA-256 recorded; loopback only with allow_private", async () => {
    const tar = archive("tar.gz", good);
    const zip = archive("zip", [{ name: "SKILL.md", text: skillMd("zipped", "Z.") }]);
    const base = await serve({ "/tea.tar.gz": tar, "/z.zip": zip });
    await fails(["install", `${base}/tea.tar.gz`, "--yes"], /127\.0\.0\.1|private|loopback/i);
    process.env["HERALD_WEB_ALLOW_PRIVATE"] = "true";
    expect(await herald("install", `${base}/tea.tar.gz`, "--yes")).toMatch(/Installed tea-order/);
    expect(readFileSync(installed("tea-order", "templates/order.md"), "utf8")).toBe("100 g {tea}\n");
    expect(existsSync(installed("tea-order", "README.md"))).toBe(false);
    const { createHash } = await import("node:crypto");
    expect(sources()["tea-order"]).toMatchObject({
      kind: "archive",
      pin: createHash("sha256").update(tar).digest("hex"),
    });
    expect(await herald("install", `${base}/z.zip`, "--yes")).toMatch(/Installed zipped/);
  });

  it.each([
    ["tar.gz", "../../escaped.md", /leaves the folder/],
    ["zip", "../../escaped.md", /leaves the folder|invalid relative path|unsafe/],
    ["tar.gz", "/tmp/absolute.md", /absolute or unsafe/],
  ] as const)("refuses a %s entry named %s and writes nothing outside", async (format, name, why) => {
    const bytes = archive(format, [...good, { name, text: "pwned" }]);
    process.env["HERALD_WEB_ALLOW_PRIVATE"] = "true";
    const base = await serve({ [`/evil.${format}`]: bytes });
    await fails(["install", `${base}/evil.${format}`, "--yes"], why);
    expect(existsSync(join(tmpdir(), "escaped.md"))).toBe(false);
    expect(existsSync(installed("tea-order"))).toBe(false);
  });

  it.each(["tar.gz", "zip"] as const)("refuses a symbolic link and a huge file in a %s", async (format) => {
    process.env["HERALD_WEB_ALLOW_PRIVATE"] = "true";
    const linked = archive(format, [...good, { name: "tea-order-main/templates/p.md", link: "/etc/passwd" }]);
    const huge = archive(format, [
      ...good,
      { name: "tea-order-main/templates/big.md", bytes: 3 * 1024 * 1024 },
    ]);
    const base = await serve({ [`/l.${format}`]: linked, [`/h.${format}`]: huge });
    await fails(["install", `${base}/l.${format}`, "--yes"], /symbolic link|symlink/);
    await fails(["install", `${base}/h.${format}`, "--yes"], /is over 1048576 bytes/);
    expect(existsSync(installed("tea-order"))).toBe(false);
  });
});

describe("skill indexes", () => {
  it("search finds skills in the indexes of skills.sources, and the line it prints installs one", async () => {
    process.env["HERALD_WEB_ALLOW_PRIVATE"] = "true";
    const tar = archive("tar.gz", good);
    let base = "";
    const index = () =>
      Buffer.from(
        JSON.stringify({
          skills: [
            {
              name: "tea-order",
              description: "Order tea from the shop",
              source: `${base}/tea.tar.gz`,
              tags: ["shopping"],
            },
            { name: "deploy", description: "Ship the app", source: "acme/ops/deploy" },
          ],
        }),
      );
    const files: Record<string, Buffer> = { "/tea.tar.gz": tar, "/broken.json": Buffer.from("{") };
    base = await serve(files);
    files["/index.json"] = index();
    process.env["HERALD_SKILLS_SOURCES"] = `${base}/index.json,${base}/broken.json`;
    try {
      const found = await herald("search", "shopping", "tea");
      expect(found).toContain(
        `tea-order — Order tea from the shop\n  herald skills install ${base}/tea.tar.gz`,
      );
      expect(found).not.toContain("deploy");
      expect(found).toMatch(/⚠️ .*broken\.json: /);
      expect(process.exitCode).toBe(1);
      process.exitCode = undefined;
      expect(await herald("install", `${base}/tea.tar.gz`, "--yes")).toMatch(/Installed tea-order/);
      delete process.env["HERALD_SKILLS_SOURCES"];
      await fails(["search", "tea"], /no skill indexes configured: .*HERALD_SKILLS_SOURCES/);
    } finally {
      delete process.env["HERALD_SKILLS_SOURCES"];
    }
  });
});

describe("parseSkillSource", () => {
  it("reads GitHub's short form, git URLs with a folder and ref, and archive URLs with a folder", () => {
    expect(parseSkillSource("acme/skills/ops/deploy@v2")).toEqual({
      kind: "git",
      url: "https://github.com/acme/skills.git",
      ref: "v2",
      path: "ops/deploy",
    });
    expect(parseSkillSource("https://git.example/x/repo.git//tools/a#main")).toEqual({
      kind: "git",
      url: "https://git.example/x/repo.git",
      ref: "main",
      path: "tools/a",
    });
    expect(parseSkillSource("https://example.com/s.tar.gz#pkg/skill")).toEqual({
      kind: "archive",
      url: "https://example.com/s.tar.gz",
      format: "tar.gz",
      path: "pkg/skill",
    });
    expect(() => parseSkillSource("acme/skills/../../etc")).toThrow(/not a folder here|leaves/);
    expect(() => parseSkillSource("not a source")).toThrow(/owner\/repo/);
  });
});
