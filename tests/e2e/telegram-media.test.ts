/** Files in (downloaded into HERALD_HOME/cache, capped) and out (photo or document). */
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, type TelegramRig, telegramRig } from "./telegram-helpers.js";

let rig: TelegramRig;
afterEach(async () => {
  await rig?.close();
});

/** A fixture message whose file refs point at files the fake serves. */
async function withFiles(name: string, fields: Record<string, unknown>) {
  const update = await fixture(name);
  Object.assign(update["message"] as Record<string, unknown>, fields);
  return update;
}

describe("telegram: media", () => {
  it("downloads photos (largest that fits), documents, voice and audio into the cache as attachments", async () => {
    rig = await telegramRig();
    await rig.start();
    const { fake } = rig;
    const small = fake.addFile("small-jpeg", "photos/file_1.jpg");
    const large = fake.addFile(Buffer.alloc(5000, 7), "photos/file_2.jpg");
    const pdf = fake.addFile("%PDF-1.4 notes", "documents/file_3.pdf");
    const voice = fake.addFile("OggS voice", "voice/file_4.oga");
    const mp3 = fake.addFile("ID3 audio", "music/file_5.mp3");
    fake.pushUpdate(
      await withFiles("private-photo", {
        photo: [
          { ...small, width: 90, height: 67 },
          { ...large, width: 1280, height: 960 },
        ],
      }),
    );
    fake.pushUpdate(
      await withFiles("private-document", {
        document: { ...pdf, file_name: "notes.pdf", mime_type: "application/pdf" },
      }),
    );
    fake.pushUpdate(
      await withFiles("private-voice", { voice: { ...voice, duration: 3, mime_type: "audio/ogg" } }),
    );
    fake.pushUpdate(
      await withFiles("private-audio", {
        audio: { ...mp3, duration: 185, file_name: "lecture.mp3", mime_type: "audio/mpeg" },
      }),
    );
    await rig.waitForReceived(4);
    const [photo, doc, note, audio] = rig.received;

    expect(photo!.text).toBe("What is on this board?");
    expect(photo!.attachments).toEqual([
      expect.objectContaining({ kind: "image", mimeType: "image/jpeg", sizeBytes: 5000 }),
    ]);
    expect(readFileSync(photo!.attachments![0]!.path)).toEqual(Buffer.alloc(5000, 7));
    expect(doc!.attachments![0]).toMatchObject({
      kind: "document",
      fileName: "notes.pdf",
      mimeType: "application/pdf",
    });
    expect(readFileSync(doc!.attachments![0]!.path, "utf8")).toBe("%PDF-1.4 notes");
    expect(note!.attachments![0]).toMatchObject({ kind: "voice", mimeType: "audio/ogg" });
    expect(audio!.attachments![0]).toMatchObject({ kind: "audio", fileName: "lecture.mp3" });
    for (const m of rig.received)
      expect(m.attachments![0]!.path.startsWith(join(rig.cacheDir, "telegram"))).toBe(true);
  });

  it("does not download a file over the size cap, and says so in the text", async () => {
    rig = await telegramRig({ mediaMaxBytes: 1000 });
    await rig.start();
    const big = rig.fake.addFile(Buffer.alloc(4000, 1), "documents/big.zip");
    rig.fake.pushUpdate(await withFiles("private-document", { document: { ...big, file_name: "big.zip" } }));
    // A file whose size Telegram did not declare is cut off while streaming.
    const sneaky = rig.fake.addFile(Buffer.alloc(4000, 2), "documents/sneaky.bin");
    rig.fake.pushUpdate(
      await withFiles("private-document", {
        message_id: 50,
        document: { file_id: sneaky.file_id, file_unique_id: sneaky.file_unique_id, file_name: "sneaky.bin" },
      }),
    );
    await rig.waitForReceived(2);
    const [declared, streamed] = rig.received;
    expect(declared!.attachments).toBeUndefined();
    expect(declared!.text).toMatch(
      /^Summarise please\n\n\[attachment not downloaded: big\.zip is 4 KB, over the 1000 bytes limit\]$/,
    );
    expect(streamed!.attachments).toBeUndefined();
    expect(streamed!.text).toContain("[attachment not downloaded: sneaky.bin is over the");
    expect(rig.fake.callsTo("getFile")).toHaveLength(1);
  });

  it("reuses an earlier download of the same file and marks it used now, so housekeeping keeps it", async () => {
    rig = await telegramRig();
    await rig.start();
    const pdf = rig.fake.addFile("%PDF-1.4 minutes", "documents/minutes.pdf");
    const send = async (messageId: number) =>
      rig.fake.pushUpdate(
        await withFiles("private-document", {
          message_id: messageId,
          document: { ...pdf, file_name: "minutes.pdf", mime_type: "application/pdf" },
        }),
      );
    await send(60);
    await rig.waitForReceived(1);
    const path = rig.received[0]!.attachments![0]!.path;
    const monthAgo = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(path, monthAgo, monthAgo);
    await send(61);
    await rig.waitForReceived(2);
    expect(rig.received[1]!.attachments![0]!.path).toBe(path);
    expect(rig.fake.callsTo("getFile")).toHaveLength(1);
    expect(Date.now() - statSync(path).mtimeMs).toBeLessThan(60_000);
  });

  it("leaves files of group messages nobody addressed to the bot undownloaded", async () => {
    rig = await telegramRig();
    await rig.start();
    const file = rig.fake.addFile("img", "photos/g.jpg");
    rig.fake.userSends({
      chatId: -100777,
      extra: { photo: [{ ...file, width: 10, height: 10 }], caption: "our team" },
    });
    await rig.waitForReceived(1);
    expect(rig.received[0]).toMatchObject({ mentioned: false, text: "our team" });
    expect(rig.received[0]!.attachments).toBeUndefined();
    expect(rig.fake.callsTo("getFile")).toHaveLength(0);
  });

  it("sends the agent's files: images as photos, others as documents, after the text", async () => {
    rig = await telegramRig();
    await rig.start();
    const png = join(rig.homeDir, "chart.png");
    const csv = join(rig.homeDir, "data.csv");
    writeFileSync(png, Buffer.from("\x89PNG fake image"));
    writeFileSync(csv, "a,b\n1,2\n");
    const result = await rig.adapter.send(
      { platform: "telegram", chatId: "111" },
      {
        text: "Here you go",
        files: [
          { path: png, caption: "The chart" },
          { path: csv, fileName: "data.csv" },
          { path: join(rig.homeDir, "gone.txt") },
        ],
        idempotencyKey: "f",
      },
    );
    expect(result.messageIds).toHaveLength(4);
    const photo = rig.fake.callsTo("sendPhoto")[0]!;
    expect(photo.params).toMatchObject({ chat_id: "111", caption: "The chart" });
    expect(Object.values(photo.files)[0]).toMatchObject({
      fileName: "chart.png",
      content: Buffer.from("\x89PNG fake image"),
    });
    const doc = rig.fake.callsTo("sendDocument")[0]!;
    expect(Object.values(doc.files)[0]).toMatchObject({
      fileName: "data.csv",
      content: Buffer.from("a,b\n1,2\n"),
    });
    const messages = rig.fake.botMessages(111);
    expect(messages.map((m) => (m.photo ? "photo" : m.document ? "document" : m.text))).toEqual([
      "Here you go",
      "photo",
      "document",
      "⚠️ gone.txt could not be sent: the file no longer exists.",
    ]);
  });
});
