/**
 * The cache's housekeeping on real files: age by modification time, symbolic links never followed,
 * emptied directories removed, files open turns and undelivered replies name kept, and the config key.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { pruneOldFiles, runHousekeeping, WORKER_CACHE_FOLDERS } from "../../agent/exec/index.js";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";
import { createLogger, silentLogger } from "../../core/logger.js";
import { filesInUse } from "../../gateway/maintenance.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

const DAY = 86_400_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Writes `path` with `bytes` bytes, last modified `ageDays` ago. */
function file(path: string, ageDays: number, bytes = 10): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "x".repeat(bytes));
  age(path, ageDays);
  return path;
}

function age(path: string, days: number): void {
  const at = new Date(Date.now() - days * DAY);
  utimesSync(path, at, at);
}

describe("pruneOldFiles", () => {
  it("removes files older than the retention and keeps newer ones, counting files and bytes", async () => {
    const cache = tempDir("herald-cache-");
    const oldPhoto = file(join(cache, "telegram", "old.jpg"), 10, 300);
    const oldVoice = file(join(cache, "mattermost", "voice.ogg"), 8, 200);
    const recent = file(join(cache, "telegram", "recent.jpg"), 6);
    const fresh = file(join(cache, "mcp", "files", "now.png"), 0);

    const report = await pruneOldFiles(cache, { olderThanMs: 7 * DAY });

    expect(existsSync(oldPhoto)).toBe(false);
    expect(existsSync(oldVoice)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(fresh)).toBe(true);
    expect(report).toMatchObject({
      files: 2,
      bytes: 500,
      failed: 0,
      byFolder: { telegram: 1, mattermost: 1 },
    });
  });

  it("does not follow a symbolic link out of the cache: its target survives, and so does the link", async () => {
    const cache = tempDir("herald-cache-");
    const outside = tempDir("herald-outside-");
    const precious = file(join(outside, "precious.txt"), 100);
    const nested = file(join(outside, "deep", "notes.txt"), 100);
    mkdirSync(join(cache, "mcp"), { recursive: true });
    symlinkSync(outside, join(cache, "mcp", "to-outside"));
    symlinkSync(precious, join(cache, "mcp", "precious-link.txt"));
    // A whole folder of the cache that is a link elsewhere is not walked either.
    symlinkSync(outside, join(cache, "discord"));
    const old = file(join(cache, "mcp", "old.bin"), 30);

    const report = await pruneOldFiles(cache, { olderThanMs: 7 * DAY });

    expect(existsSync(old)).toBe(false);
    expect(readFileSync(precious, "utf8")).toBe("x".repeat(10));
    expect(existsSync(nested)).toBe(true);
    expect(existsSync(join(cache, "mcp", "to-outside"))).toBe(true);
    expect(existsSync(join(cache, "mcp", "precious-link.txt"))).toBe(true);
    expect(report.skipped).toBe(3);
    expect(report.files).toBe(1);
  });

  it("removes the directories it empties and old empty ones, keeps the cache's own folders and fresh ones", async () => {
    const cache = tempDir("herald-cache-");
    const emptied = join(cache, "mcp", "old-server");
    file(join(emptied, "a.png"), 20);
    file(join(emptied, "sub", "b.png"), 20);
    const living = join(cache, "mcp", "busy-server");
    file(join(living, "old.png"), 20);
    file(join(living, "new.png"), 1);
    const staleEmpty = join(cache, "mcp", "stale-empty");
    mkdirSync(staleEmpty);
    age(staleEmpty, 20);
    const freshEmpty = join(cache, "mcp", "just-made");
    mkdirSync(freshEmpty);
    file(join(cache, "telegram", "old.jpg"), 20);

    const report = await pruneOldFiles(cache, { olderThanMs: 7 * DAY });

    expect(existsSync(emptied)).toBe(false);
    expect(existsSync(staleEmpty)).toBe(false);
    expect(existsSync(join(living, "new.png"))).toBe(true);
    expect(existsSync(join(living, "old.png"))).toBe(false);
    expect(existsSync(freshEmpty)).toBe(true);
    // Writers create these once and write into them: they stay, empty.
    expect(existsSync(join(cache, "telegram"))).toBe(true);
    expect(existsSync(join(cache, "mcp"))).toBe(true);
    expect(report.directories).toBe(3);
  });

  it("walks only the folders it is given (a worker's) and treats a missing cache as empty", async () => {
    const cache = tempDir("herald-cache-");
    const inbound = file(join(cache, "telegram", "old.jpg"), 30);
    const mcp = file(join(cache, "mcp", "srv", "old.png"), 30);
    const speech = file(join(cache, "speech", "reply.ogg"), 30);

    await pruneOldFiles(cache, { olderThanMs: 7 * DAY, only: WORKER_CACHE_FOLDERS });

    expect(existsSync(inbound)).toBe(true);
    expect(existsSync(mcp)).toBe(false);
    expect(existsSync(speech)).toBe(false);
    expect(await pruneOldFiles(join(cache, "missing"), { olderThanMs: DAY })).toMatchObject({
      files: 0,
      failed: 0,
    });
  });
});

describe("runHousekeeping", () => {
  it("keeps old files an open turn or an undelivered reply names, and removes them once those are done", async () => {
    const home = tempDir("herald-home-");
    const cache = join(home, "cache");
    const attachment = file(join(cache, "telegram", "photo.jpg"), 30);
    const replyFile = file(join(cache, "mcp", "srv", "chart.png"), 30);
    const unused = file(join(cache, "telegram", "unused.jpg"), 30);
    const state = SqliteState.open(join(home, "state.db"));
    const chat = { platform: "telegram", chatId: "42" };
    const session = state.sessions.open(
      { chat, chatType: "dm", userId: "u" },
      { mode: "none", idleMinutes: 1, atHour: 4 },
    );
    state.turns.create({
      id: "t1",
      sessionId: session.session.id,
      sessionKey: "telegram:dm:42",
      chat,
      userId: "u",
      source: "chat",
      input: "what is this?",
      inbound: {
        platform: "telegram",
        messageId: "m1",
        chat,
        chatType: "dm",
        sender: { id: "u" },
        text: "what is this?",
        mentioned: true,
        attachments: [{ kind: "image", path: attachment }],
      },
    });
    const reply = state.outbox.add(chat, { text: "here", files: [{ path: replyFile }] });
    const options = {
      cacheDir: cache,
      mediaRetentionMs: 7 * DAY,
      inUse: () => filesInUse(state),
      logger: silentLogger(),
    };

    const first = await runHousekeeping(options);
    expect(existsSync(unused)).toBe(false);
    expect(existsSync(attachment)).toBe(true);
    expect(existsSync(replyFile)).toBe(true);
    expect(first.cache).toMatchObject({ files: 1, kept: 2 });

    state.turns.markRunning("t1");
    state.turns.finish("t1", "done");
    state.outbox.delivered(reply.id);
    await runHousekeeping(options);
    expect(existsSync(attachment)).toBe(false);
    expect(existsSync(replyFile)).toBe(false);
    state.close();
  });

  it("leaves the cache alone when it cannot tell which files are in use", async () => {
    const cache = tempDir("herald-cache-");
    const old = file(join(cache, "telegram", "old.jpg"), 30);
    const result = await runHousekeeping({
      cacheDir: cache,
      mediaRetentionMs: 7 * DAY,
      inUse: () => {
        throw new Error("the state file is closed");
      },
      logger: silentLogger(),
    });
    expect(result.cache).toBeUndefined();
    expect(existsSync(old)).toBe(true);
  });

  it("logs counts and bytes of what it removed, not names", async () => {
    const cache = tempDir("herald-cache-");
    file(join(cache, "slack", "secret-plans.pdf"), 30, 1234);
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    await runHousekeeping({ cacheDir: cache, mediaRetentionMs: 7 * DAY, logger });
    const line = lines.find((l) => l.includes("old cache and media files removed"));
    expect(line).toBeDefined();
    expect(JSON.parse(line ?? "{}")).toMatchObject({ files: 1, bytes: 1234, byFolder: { slack: 1 } });
    expect(lines.join("")).not.toContain("secret-plans");
  });
});

describe("media.retention_days", () => {
  function configError(env: Record<string, string>, yaml?: string): ConfigError {
    const home = tempDir("herald-config-");
    if (yaml) writeFileSync(join(home, "config.yaml"), yaml);
    try {
      loadConfig({ env: { HERALD_HOME: home, ...env } });
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error("expected a ConfigError");
  }

  it("defaults to 7 days and takes HERALD_MEDIA_RETENTION_DAYS", () => {
    const home = tempDir("herald-config-");
    expect(loadConfig({ env: { HERALD_HOME: home } }).media.retentionDays).toBe(7);
    expect(
      loadConfig({ env: { HERALD_HOME: home, HERALD_MEDIA_RETENTION_DAYS: "30" } }).media.retentionDays,
    ).toBe(30);
  });

  it("refuses zero, a negative number or a word with an error naming the key", () => {
    const zero = configError({ HERALD_MEDIA_RETENTION_DAYS: "0" });
    expect(zero.key).toBe("HERALD_MEDIA_RETENTION_DAYS");
    expect(zero.message).toContain("HERALD_MEDIA_RETENTION_DAYS (config.yaml: media.retention_days)");
    expect(zero.message).toContain("at least 1");
    const word = configError({ HERALD_MEDIA_RETENTION_DAYS: "a week" });
    expect(word.key).toBe("HERALD_MEDIA_RETENTION_DAYS");
    expect(word.message).toContain("whole number");
    const yaml = configError({}, "media:\n  retention_days: -3\n");
    expect(yaml.key).toBe("HERALD_MEDIA_RETENTION_DAYS");
    expect(yaml.message).toContain("media.retention_days");
  });
});
