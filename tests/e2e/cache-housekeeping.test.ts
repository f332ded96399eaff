/**
 * The cache's housekeeping as the processes run it: the embedded gateway removes old inbound media and
 * MCP files at start (but not a file an open turn still names), and on Redis the gateway prunes the
 * inbound media while a `herald worker` prunes the cache folders it writes itself.
 */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SqliteState } from "../../sessions/sqlite-state.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const DAY = 86_400_000;
const redis = redisPerFile();
let harness: Harness | undefined;
let cluster: HeraldCluster | undefined;
let llm: FakeLlm | undefined;
afterEach(async () => {
  await harness?.stop();
  await cluster?.stop();
  await llm?.close();
  harness = undefined;
  cluster = undefined;
  llm = undefined;
});

/** Writes `path`, last modified `ageDays` ago. */
function file(path: string, ageDays: number): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "bytes");
  const at = new Date(Date.now() - ageDays * DAY);
  utimesSync(path, at, at);
  return path;
}

describe("cache housekeeping", () => {
  it("the embedded gateway removes cache files older than media.retention_days at start, keeps newer ones and those an open turn names", async () => {
    const home = mkdtempSync(join(tmpdir(), "herald-cache-home-"));
    const cache = join(home, "cache");
    const oldVoice = file(join(cache, "mattermost", "post1-voice.ogg"), 12);
    const oldMcp = file(join(cache, "mcp", "charts", "mcp-1.png"), 12);
    const recent = file(join(cache, "mattermost", "post2-photo.jpg"), 3);
    const pending = file(join(cache, "telegram", "waiting.jpg"), 12);
    // A turn left open by a gateway that was stopped for longer than the retention.
    const state = SqliteState.open(join(home, "state.db"));
    const chat = { platform: "api", chatId: "restart" };
    const session = state.sessions.open(
      { chat, chatType: "dm", userId: "u" },
      { mode: "none", idleMinutes: 1, atHour: 4 },
    );
    state.turns.create({
      id: "left-open",
      sessionId: session.session.id,
      sessionKey: session.session.key,
      chat,
      userId: "u",
      source: "chat",
      input: "look",
      inbound: {
        platform: "api",
        messageId: "m1",
        chat,
        chatType: "dm",
        sender: { id: "u" },
        text: "look",
        mentioned: true,
        attachments: [{ kind: "image", path: pending }],
      },
    });
    state.close();

    harness = await startHarness({ env: { HERALD_HOME: home, HERALD_MEDIA_RETENTION_DAYS: "7" } });

    await vi.waitFor(
      () => {
        expect(existsSync(oldVoice)).toBe(false);
        expect(existsSync(join(cache, "mcp", "charts"))).toBe(false);
      },
      { timeout: 10_000 },
    );
    expect(existsSync(oldMcp)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(pending)).toBe(true);
  });

  it("on Redis the gateway prunes inbound media and the worker prunes its own cache folders only", async () => {
    llm = await startFakeLlm();
    cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
    const gatewayPhoto = file(join(cluster.home, "cache", "telegram", "old.jpg"), 30);
    await cluster.startGateway();
    // The worker's HERALD_HOME is `worker-<n>` of the cluster's (n = processes started so far).
    const workerHome = join(cluster.home, `worker-${cluster.processes.length}`);
    const workerMcp = file(join(workerHome, "cache", "mcp", "srv", "mcp-1.png"), 30);
    const workerSpeech = file(join(workerHome, "cache", "speech", "reply.ogg"), 30);
    const workerRecent = file(join(workerHome, "cache", "mcp", "srv", "mcp-2.png"), 1);
    const notTheWorkers = file(join(workerHome, "cache", "telegram", "old.jpg"), 30);
    await cluster.startWorker();

    await vi.waitFor(
      () => {
        expect(existsSync(gatewayPhoto)).toBe(false);
        expect(existsSync(workerMcp)).toBe(false);
        expect(existsSync(workerSpeech)).toBe(false);
      },
      { timeout: 15_000 },
    );
    expect(existsSync(workerRecent)).toBe(true);
    expect(existsSync(notTheWorkers)).toBe(true);
  });
});
