/**
 * The Matrix adapter's sending side against the fake homeserver: chunking, transaction-id idempotency,
 * safe HTML, error mapping, typing, edits, redactions and files.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import type { ChatRef } from "../../core/types.js";
import { ALICE, type MatrixEnv, startMatrixEnv } from "./matrix-env.js";

let env: MatrixEnv;
let room: string;
let chat: ChatRef;

beforeEach(async () => {
  env = await startMatrixEnv();
  room = env.fake.createRoom({ members: [ALICE], direct: true });
  chat = { platform: "matrix", chatId: room };
  await env.start();
});

afterEach(async () => {
  await env.close();
});

/** About 10,000 characters in paragraphs of ~500, each ending in a marker. */
function longText(): string {
  return Array.from({ length: 20 }, (_, i) => `${"word ".repeat(98)}end-of-paragraph-${i}.`).join("\n\n");
}

describe("Matrix adapter: sending", () => {
  it("splits a long reply at paragraph boundaries into events of at most 4,000 characters", async () => {
    const text = longText();
    const result = await env.adapter!.send(chat, { text, replyToId: "$question", idempotencyKey: "long" });
    const sent = env.fake.messages(room);
    expect(sent.length).toBe(3);
    expect(result.messageIds).toEqual(sent.map((s) => s.eventId));
    for (const s of sent) {
      const body = String(s.content["body"]);
      expect(body.length).toBeLessThanOrEqual(4000);
      expect(body).toMatch(/end-of-paragraph-\d+\.$/);
    }
    expect(sent.map((s) => s.content["body"]).join("\n\n")).toBe(text);
    // Only the first chunk quotes the question.
    expect(sent[0]!.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: "$question" } });
    expect(sent[1]!.content["m.relates_to"]).toBeUndefined();
  });

  it("never posts twice when the same outbox item is retried (transaction ids), and resumes at fromChunk", async () => {
    const text = longText();
    const first = await env.adapter!.send(chat, { text, idempotencyKey: "retry-me" });
    const again = await env.adapter!.send(chat, { text, idempotencyKey: "retry-me" });
    expect(again.messageIds).toEqual(first.messageIds);
    expect(env.fake.messages(room)).toHaveLength(3);
    const puts = env.fake.requests.filter(
      (r) => r.method === "PUT" && r.path.includes("/send/m.room.message/"),
    );
    expect(puts).toHaveLength(6);
    expect(new Set(puts.map((p) => p.path)).size).toBe(3);

    const resumed = await env.adapter!.send(chat, { text, idempotencyKey: "other" }, { fromChunk: 2 });
    expect(resumed.messageIds).toHaveLength(1);
    expect(String(env.fake.messages(room)[3]!.content["body"])).toContain("end-of-paragraph-19.");
  });

  it("renders Markdown to sanitised HTML: no scripts, handlers or javascript: links survive", async () => {
    const text = [
      "**bold** and `code` and [a link](https://example.org)",
      "<script>alert('x')</script>",
      '<img src="https://evil.example/x.png" onerror="alert(1)">',
      "[click](javascript:alert(1))",
      '<a href="https://ok.example" onclick="steal()">ok</a>',
      "```js\nconst a = 1 < 2;\n```",
    ].join("\n\n");
    await env.adapter!.send(chat, { text, idempotencyKey: "html" });
    const [sent] = await env.fake.waitForMessages(1, room);
    const html = String(sent!.content["formatted_body"]);
    expect(sent!.content["format"]).toBe("org.matrix.custom.html");
    expect(sent!.content["body"]).toBe(text);
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain('<a href="https://example.org">a link</a>');
    expect(html).toContain('<code class="language-js">const a = 1 &lt; 2;');
    expect(html).not.toMatch(/<script|onerror|onclick|javascript:|evil\.example/i);
  });

  it("sends notices as m.notice", async () => {
    await env.adapter!.send(chat, { text: "working…", kind: "notice", idempotencyKey: "n" });
    const [sent] = await env.fake.waitForMessages(1, room);
    expect(sent!.content["msgtype"]).toBe("m.notice");
  });

  it("reports a rate limit as retryable with the server's wait, then succeeds on retry", async () => {
    env.fake.fail({
      method: "PUT",
      path: "/send/m.room.message/",
      status: 429,
      body: { errcode: "M_LIMIT_EXCEEDED", error: "Too Many Requests", retry_after_ms: 1500 },
    });
    const err = await env.adapter!.send(chat, { text: "hi", idempotencyKey: "rl" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 1500, code: "platform_rate_limited" });
    await env.adapter!.send(chat, { text: "hi", idempotencyKey: "rl" });
    expect(env.fake.messages(room)).toHaveLength(1);
  });

  it("marks server errors and malformed answers retryable, refusals not", async () => {
    env.fake.fail({ method: "PUT", path: "/send/", status: 502, rawBody: "<html>Bad Gateway</html>" });
    await expect(env.adapter!.send(chat, { text: "a", idempotencyKey: "e1" })).rejects.toMatchObject({
      retryable: true,
    });
    env.fake.fail({ method: "PUT", path: "/send/", status: 200, rawBody: "{not json" });
    await expect(env.adapter!.send(chat, { text: "a", idempotencyKey: "e2" })).rejects.toMatchObject({
      retryable: true,
    });
    const elsewhere = env.fake.createRoom({ members: [ALICE], bot: "none" });
    await expect(
      env.adapter!.send({ platform: "matrix", chatId: elsewhere }, { text: "a", idempotencyKey: "e3" }),
    ).rejects.toMatchObject({ retryable: false });
    expect(env.fake.messages()).toHaveLength(0);
  });

  it("shows typing, edits the progress message with m.replace, deletes it, and stops typing after the reply", async () => {
    const adapter = env.adapter!;
    await adapter.sendTyping(chat);
    await adapter.sendTyping(chat); // within 2 s: not sent again
    expect(env.fake.typing).toEqual([{ roomId: room, typing: true, timeoutMs: 5000 }]);
    const { messageIds } = await adapter.send(chat, {
      text: "🔧 search",
      kind: "notice",
      idempotencyKey: "progress-1",
    });
    await adapter.edit(chat, messageIds[0]!, "🔧 search\n🔧 read");
    const edit = env.fake.messages(room)[1]!;
    expect(edit.content).toMatchObject({
      body: "* 🔧 search\n🔧 read",
      "m.new_content": { msgtype: "m.notice", body: "🔧 search\n🔧 read" },
      "m.relates_to": { rel_type: "m.replace", event_id: messageIds[0] },
    });
    await adapter.deleteMessage(chat, messageIds[0]!);
    expect(env.fake.sent.find((s) => s.type === "m.room.redaction")?.content).toMatchObject({
      redacts: messageIds[0],
    });
    await adapter.send(chat, { text: "done", idempotencyKey: "reply" });
    await env.fake.waitFor(() => env.fake.typing.some((t) => !t.typing));
  });

  it("uploads outbound files and sends them after the text", async () => {
    const path = join(env.cacheDir, "chart.png");
    writeFileSync(path, Buffer.from("89504e470d0a1a0a", "hex"));
    const result = await env.adapter!.send(chat, {
      text: "Here is the chart.",
      files: [{ path, caption: "Weekly chart" }],
      idempotencyKey: "file",
    });
    expect(result.messageIds).toHaveLength(2);
    const [, image] = env.fake.messages(room);
    expect(image!.content).toMatchObject({
      msgtype: "m.image",
      body: "Weekly chart",
      filename: "chart.png",
      info: { mimetype: "image/png", size: 8 },
    });
    expect(String(image!.content["url"])).toMatch(/^mxc:\/\/localhost\//);
  });
});
