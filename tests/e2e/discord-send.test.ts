/**
 * Discord adapter, outbound side, end to end against the fake Discord: chunking, mention safety,
 * idempotent retries through nonces, rate limits, formatting, typing, progress edits, files.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { openFenceAtEnd } from "../../adapters/shared/split.js";
import { PlatformError } from "../../core/errors.js";
import type { ChatRef } from "../../core/types.js";
import { type DiscordEnv, IDS, startDiscordEnv } from "./discord-env.js";

let env: DiscordEnv | undefined;

afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const dm: ChatRef = { platform: "discord", chatId: IDS.aliceDm };
const general: ChatRef = { platform: "discord", chatId: IDS.general };

/** A long answer with prose and a long code block, about 6,000 characters. */
function longAnswer(): string {
  const prose = Array.from(
    { length: 25 },
    (_, i) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(6)}`,
  );
  const code = Array.from({ length: 70 }, (_, i) => `  const value${i} = compute(${i}); // step ${i}`);
  return [...prose.slice(0, 10), "```ts", ...code, "```", ...prose.slice(10)].join("\n\n").slice(0, 6200);
}

describe("discord send", () => {
  it("answers a DM with a nonce, enforce_nonce and safe allowed_mentions, without quoting", async () => {
    env = await startDiscordEnv();
    const inbound = env.fake.userSays({ channelId: IDS.aliceDm, content: "hi" });
    const result = await env.adapter.send(dm, {
      text: "Hello **Alice**!",
      replyToId: inbound["id"],
      idempotencyKey: "t1",
    });
    const [posted] = env.fake.posted;
    expect(result.messageIds).toEqual([posted!.id]);
    expect(posted).toMatchObject({ channelId: IDS.aliceDm, content: "Hello **Alice**!", replyTo: undefined });
    expect(posted!.nonce!.length).toBeLessThanOrEqual(25);
    const body = env.fake.requests.find((r) => r.method === "POST" && r.path.endsWith("/messages"))!.body!;
    expect(body["enforce_nonce"]).toBe(true);
    expect(body["allowed_mentions"]).toMatchObject({ parse: ["users"] });
  });

  it("quotes the question in a server channel and notifies only the asker", async () => {
    env = await startDiscordEnv();
    const inbound = env.fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> hi` });
    await env.nextMessage(1);
    await env.adapter.send(general, { text: "Hi there.", replyToId: inbound["id"], idempotencyKey: "t2" });
    expect(env.fake.posted[0]).toMatchObject({
      replyTo: inbound["id"],
      pings: { everyone: false, roles: [], users: [IDS.alice] },
    });
  });

  it("splits a 6,000-character reply into valid chunks with code fences closed and reopened", async () => {
    env = await startDiscordEnv();
    const text = longAnswer();
    expect(text.length).toBeGreaterThan(6000);
    const result = await env.adapter.send(dm, { text, idempotencyKey: "long" });
    const chunks = env.fake.posted.map((p) => p.content);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(result.messageIds).toHaveLength(chunks.length);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(openFenceAtEnd(chunk)).toBeUndefined();
    }
    // Every code line arrives exactly once, inside a fenced block.
    const all = chunks.join("\n");
    for (let i = 0; i < 70; i++) expect(all.split(`const value${i} =`).length - 1).toBe(1);
    const withCode = chunks.filter((c) => c.includes("const value"));
    expect(withCode.length).toBeGreaterThan(1);
    for (const c of withCode) expect(c).toMatch(/```ts\n/);
    expect(new Set(env.fake.posted.map((p) => p.nonce)).size).toBe(chunks.length);
  });

  it("never pings @everyone, @here or roles from model output", async () => {
    env = await startDiscordEnv();
    const text = `@everyone look! @here too. <@&${IDS.modRole}> and <@&${IDS.botRole}>, cc <@${IDS.bob}>`;
    await env.adapter.send(general, { text, idempotencyKey: "ping" });
    const [posted] = env.fake.posted;
    expect(posted!.content).toContain("@everyone");
    expect(posted!.pings.everyone).toBe(false);
    expect(posted!.pings.roles).toEqual([]);
    // The fake computes pings like Discord: without allowed_mentions the same text pings everyone.
    const { computePings } = await import("../fakes/discord/index.js");
    expect(computePings(text, undefined).everyone).toBe(true);
  });

  it("a response lost after Discord posted is retried without a second message", async () => {
    env = await startDiscordEnv();
    env.fake.fail({ method: "POST", path: /\/messages$/, status: 502, commit: true });
    const result = await env.adapter.send(dm, { text: "exactly once", idempotencyKey: "lost" });
    const posts = env.fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/messages"));
    expect(posts.length).toBe(2);
    expect(env.fake.posted).toHaveLength(1);
    expect(result.messageIds).toEqual([env.fake.posted[0]!.id]);
  });

  it("an outbox retry after a failed send reuses the nonces: no chunk is posted twice", async () => {
    env = await startDiscordEnv();
    // Every attempt of discord.js fails after Discord posted (1 try + 3 retries).
    env.fake.fail({ method: "POST", path: /\/messages$/, status: 500, commit: true, times: 4 });
    const message = { text: "retried by the outbox", idempotencyKey: "outbox-7" };
    const error = await env.adapter.send(dm, message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).retryable).toBe(true);
    const again = await env.adapter.send(dm, message);
    expect(env.fake.posted).toHaveLength(1);
    expect(again.messageIds).toEqual([env.fake.posted[0]!.id]);
  });

  it("a malformed answer fails retryably, and the retry finds the posted message instead of posting again", async () => {
    env = await startDiscordEnv();
    env.fake.fail({
      method: "POST",
      path: /\/messages$/,
      rawBody: "<html>502 Bad Gateway</html>",
      commit: true,
    });
    const message = { text: "through a broken proxy", idempotencyKey: "garbled" };
    const error = (await env.adapter.send(dm, message).catch((e: unknown) => e)) as PlatformError;
    expect(error).toBeInstanceOf(PlatformError);
    expect(error.retryable).toBe(true);
    const again = await env.adapter.send(dm, message);
    expect(env.fake.posted).toHaveLength(1);
    expect(again.messageIds).toEqual([env.fake.posted[0]!.id]);
  });

  it("a slow answer that times out is retried by discord.js and still posts once", async () => {
    env = await startDiscordEnv({ adapter: { restTimeoutMs: 300 } });
    env.fake.fail({ method: "POST", path: /\/messages$/, delayMs: 1000 });
    await env.adapter.send(dm, { text: "slow", idempotencyKey: "slow" });
    expect(env.fake.posted).toHaveLength(1);
  });

  it("resumes a partly delivered reply at fromChunk, reporting each chunk", async () => {
    env = await startDiscordEnv();
    const text = longAnswer();
    const seen: number[] = [];
    const result = await env.adapter.send(
      dm,
      { text, idempotencyKey: "part" },
      {
        fromChunk: 2,
        onChunkSent: (i) => seen.push(i),
      },
    );
    const total = (await import("../../adapters/discord/format.js")).formatChunks(text).length;
    expect(seen).toEqual(Array.from({ length: total - 2 }, (_, i) => i + 2));
    expect(result.messageIds).toHaveLength(total - 2);
    expect(env.fake.posted).toHaveLength(total - 2);
  });

  it("waits out a short 429 and surfaces a long one as retryable with retryAfterMs", async () => {
    env = await startDiscordEnv({ adapter: { maxRateLimitWaitMs: 2000 } });
    env.fake.fail({ method: "POST", path: /\/messages$/, status: 429, retryAfterMs: 300 });
    await env.adapter.send(dm, { text: "after a short wait", idempotencyKey: "rl1" });
    expect(env.fake.posted).toHaveLength(1);

    env.fake.fail({ method: "POST", path: /\/messages$/, status: 429, retryAfterMs: 60_000 });
    const error = (await env.adapter
      .send(dm, { text: "later", idempotencyKey: "rl2" })
      .catch((e) => e)) as PlatformError;
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: "platform_rate_limited", retryable: true });
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(59_000);
    expect(env.fake.posted).toHaveLength(1);
  });

  it("reports a missing permission as a non-retryable error that names the fix", async () => {
    env = await startDiscordEnv();
    env.fake.fail({ method: "POST", path: /\/messages$/, status: 403, code: 50013 });
    const error = (await env.adapter
      .send(general, { text: "x", idempotencyKey: "perm" })
      .catch((e) => e)) as PlatformError;
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/Send Messages/);
  });

  it("rewrites what Discord lacks: tables, deep headings, images", async () => {
    env = await startDiscordEnv();
    const text = [
      "## Results",
      "#### Details",
      "| Name | Score |",
      "|------|------:|",
      "| **Alice** | 10 |",
      "| Bob | 7 |",
      "",
      "![chart](https://example.com/chart.png)",
    ].join("\n");
    await env.adapter.send(dm, { text, idempotencyKey: "fmt" });
    const content = env.fake.posted[0]!.content;
    expect(content).toContain("## Results");
    expect(content).toContain("**Details**");
    expect(content).toContain("```\nName  | Score\n------+------\nAlice | 10\nBob   | 7\n```");
    expect(content).toContain("[chart](https://example.com/chart.png)");
    expect(content).not.toContain("![");
  });

  it("shows typing, skips refreshes within the interval, and again after a message", async () => {
    env = await startDiscordEnv();
    await env.adapter.sendTyping(dm);
    await env.adapter.sendTyping(dm);
    expect(env.fake.world.typing).toEqual([IDS.aliceDm]);
    await env.adapter.send(dm, { text: "progress", idempotencyKey: "typing" });
    await env.adapter.sendTyping(dm);
    expect(env.fake.world.typing).toEqual([IDS.aliceDm, IDS.aliceDm]);
  });

  it("keeps tool progress in one message: edits merged and applied in place, then deleted", async () => {
    env = await startDiscordEnv({ adapter: { editIntervalMs: 200 } });
    const { messageIds } = await env.adapter.send(dm, {
      text: "🔧 search",
      kind: "notice",
      idempotencyKey: "p",
    });
    const id = messageIds[0]!;
    await Promise.all([
      env.adapter.edit(dm, id, "🔧 search\n🔧 fetch"),
      env.adapter.edit(dm, id, "🔧 search\n🔧 fetch\n🔧 read"),
      env.adapter.edit(dm, id, "🔧 search\n🔧 fetch\n🔧 read\n🔧 write"),
    ]);
    const posted = env.fake.posted[0]!;
    expect(posted.currentContent).toBe("🔧 search\n🔧 fetch\n🔧 read\n🔧 write");
    expect(posted.edits.length).toBeLessThan(3);
    await env.adapter.deleteMessage(dm, id);
    expect(posted.deleted).toBe(true);
    await env.adapter.deleteMessage(dm, id); // already gone: not an error
  });

  it("attaches outbound files, with the caption as alt text", async () => {
    env = await startDiscordEnv();
    const path = join(env.cacheDir, "report.csv");
    writeFileSync(path, "a,b\n1,2\n");
    await env.adapter.send(dm, {
      text: "Here is the report.",
      files: [{ path, mimeType: "text/csv", caption: "Weekly numbers" }],
      idempotencyKey: "file",
    });
    const [posted] = env.fake.posted;
    expect(posted!.content).toBe("Here is the report.");
    expect(posted!.files).toHaveLength(1);
    expect(posted!.files[0]).toMatchObject({ name: "report.csv" });
    expect(posted!.files[0]!.data.toString()).toBe("a,b\n1,2\n");
    const body = env.fake.requests.find((r) => r.files.length > 0)!.body!;
    expect(body["attachments"]).toEqual([{ id: 0, filename: "report.csv", description: "Weekly numbers" }]);
  });

  it("attaches a file when another undici set the process's dispatcher first", async () => {
    // Herald's web tools and Slack's Socket Mode load undici 7, discord.js its own undici 6; whichever
    // loads first installs the process-wide dispatcher, and undici 7's cannot send undici 6's form body.
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(new Agent());
    try {
      env = await startDiscordEnv();
      const path = join(env.cacheDir, "reply.mp3");
      writeFileSync(path, "ID3 not really audio");
      await env.adapter.send(dm, { text: "", files: [{ path }], idempotencyKey: "voice" });
      expect(env.fake.posted.flatMap((p) => p.files).map((f) => f.data.toString())).toEqual([
        "ID3 not really audio",
      ]);
    } finally {
      setGlobalDispatcher(previous);
    }
  });

  it("reaches a user by id through a DM channel", async () => {
    env = await startDiscordEnv();
    await env.adapter.send(
      { platform: "discord", chatId: IDS.bob },
      { text: "scheduled report", idempotencyKey: "u" },
    );
    const dmReq = env.fake.requests.find((r) => r.path === "/users/@me/channels");
    expect(dmReq?.body).toEqual({ recipient_id: IDS.bob });
    const bobDm = env.fake.world.dmWith(IDS.bob)["id"];
    expect(env.fake.posted[0]).toMatchObject({ channelId: bobDm, content: "scheduled report" });
  });
});
