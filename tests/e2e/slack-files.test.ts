/**
 * Files through the Slack adapter: inbound files downloaded with the bot token (capped, and the token
 * never sent off Slack's hosts), outbound files uploaded into the thread with files.uploadV2.
 */

import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  eventCallback,
  type FakeSlack,
  loadFixture,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { type RunningAdapter, SIGNING_SECRET, startSlackAdapter } from "./slack-helpers.js";

let fake: FakeSlack;
let running: RunningAdapter;

const post = (body: Record<string, unknown>) =>
  running.adapter.handleWebhook(signedRequest(body, { secret: SIGNING_SECRET }));

/** The file_share fixture with its files replaced. */
function fileShare(files: object[]): Record<string, unknown> {
  const body = loadFixture("file-share");
  (body["event"] as Record<string, unknown>)["files"] = files;
  return body;
}

beforeEach(async () => {
  fake = await startFakeSlack();
  running = await startSlackAdapter(fake, { maxFileBytes: 1024 });
});

afterEach(async () => {
  await running.stop();
  await fake.close();
});

describe("inbound files", () => {
  it("downloads a shared file with the bot token and passes it as an attachment", async () => {
    const log = fake.hostFile({ name: "build.log", content: "error: disk full\n", mimetype: "text/plain" });
    const photo = fake.hostFile({
      name: "cat.png",
      content: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      mimetype: "image/png",
    });
    expect((await post(fileShare([log, photo]))).status).toBe(200);

    const [msg] = running.gateway.calls;
    expect(msg!.text).toBe("here is the log");
    expect(msg!.attachments).toHaveLength(2);
    const [a, b] = msg!.attachments!;
    expect(a).toMatchObject({
      kind: "document",
      fileName: "build.log",
      mimeType: "text/plain",
      sizeBytes: 17,
    });
    expect(b).toMatchObject({ kind: "image", fileName: "cat.png", mimeType: "image/png", sizeBytes: 4 });
    expect(a!.path.startsWith(running.cacheDir)).toBe(true);
    expect(await readFile(a!.path, "utf8")).toBe("error: disk full\n");
    expect(fake.downloads.map((d) => d.authorized)).toEqual([true, true]);
  });

  it("leaves out a file over the size cap (declared or actual) and tells the agent", async () => {
    const declaredBig = fake.hostFile({
      name: "huge.zip",
      content: "x",
      mimetype: "application/zip",
      size: 50_000_000,
    });
    const actuallyBig = fake.hostFile({
      name: "liar.bin",
      content: Buffer.alloc(4096),
      mimetype: "application/octet-stream",
      size: 10,
    });
    await post(fileShare([declaredBig, actuallyBig]));

    const [msg] = running.gateway.calls;
    expect(msg!.attachments).toBeUndefined();
    expect(msg!.text).toContain('attachment "huge.zip" not downloaded');
    expect(msg!.text).toContain('attachment "liar.bin" not downloaded');
    // The declared size alone was enough to skip the first; the second was cut off while reading.
    expect(fake.downloads).toHaveLength(1);
  });

  it("never sends the bot token to a host that is not Slack's", async () => {
    const seen: (string | undefined)[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end("secret stuff");
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    try {
      const port = (other.address() as AddressInfo).port;
      const foreign = { ...fake.hostFile({ name: "a.txt", content: "a", mimetype: "text/plain" }) };
      foreign.url_private = foreign.url_private_download = `http://127.0.0.1:${port}/files-pri/a.txt`;
      await post(fileShare([foreign]));
      expect(running.gateway.calls[0]!.text).toContain('attachment "a.txt" could not be downloaded');
      expect(seen).toEqual([]);
    } finally {
      other.closeAllConnections();
      await new Promise<void>((r) => other.close(() => r()));
    }
  });

  it("a DM with a file but no text still reaches the gateway", async () => {
    const file = fake.hostFile({ name: "notes.txt", content: "n", mimetype: "text/plain" });
    const event = messageEvent({
      channel: "D0ALICE01",
      ts: "1700000500.000001",
      text: "",
      subtype: "file_share",
      files: [file],
    });
    await post(eventCallback(event));
    expect(running.gateway.calls[0]).toMatchObject({ text: "", attachments: [{ fileName: "notes.txt" }] });
  });
});

describe("outbound files", () => {
  it("uploads the agent's files into the thread after the text", async () => {
    const path = join(running.cacheDir, "..", "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    const chat = { platform: "slack", chatId: "C0GENERAL1", threadId: "1700000002.000200" };
    const result = await running.adapter.send(chat, {
      text: "Here is the report.",
      files: [{ path, fileName: "report.csv", caption: "Q3 numbers" }],
      idempotencyKey: "f1",
    });

    expect(result.messageIds).toHaveLength(2);
    expect(fake.callsOf("chat.postMessage")[0]!.args).toMatchObject({ thread_ts: "1700000002.000200" });
    expect(fake.uploads).toHaveLength(1);
    const [upload] = fake.uploads;
    expect(upload!.bytes.toString()).toBe("a,b\n1,2\n");
    expect(upload).toMatchObject({
      filename: "report.csv",
      channelId: "C0GENERAL1",
      threadTs: "1700000002.000200",
      initialComment: "Q3 numbers",
    });
    expect(result.messageIds[1]).toBe(upload!.fileId);
  });

  it("a retry that resumes after the text uploads only the file", async () => {
    const path = join(running.cacheDir, "..", "chart.png");
    await writeFile(path, Buffer.from([1, 2, 3]));
    const chat = { platform: "slack", chatId: "D0ALICE01" };
    await running.adapter.send(
      chat,
      { text: "Chart:", files: [{ path }], idempotencyKey: "f2" },
      { fromChunk: 1 },
    );
    expect(fake.callsOf("chat.postMessage")).toHaveLength(0);
    expect(fake.uploads.map((u) => u.filename)).toEqual(["chart.png"]);
  });
});
