import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  readOutboundFile,
  safeFileName,
  writeCapped,
} from "../../adapters/shared/media.js";
import { PlatformError } from "../../core/errors.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-media-"));
  dirs.push(dir);
  return dir;
}
const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

describe("writeCapped", () => {
  it("writes a stream up to the cap and returns its size", async () => {
    const path = join(tempDir(), "ok.txt");
    expect(await writeCapped(chunks("hello ", "world"), path, 11)).toBe(11);
    expect(readFileSync(path, "utf8")).toBe("hello world");
  });

  it("fails with FileTooLargeError past the cap and leaves no partial file", async () => {
    const path = join(tempDir(), "big.bin");
    const err = await writeCapped(chunks("12345", "67890", "x"), path, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect((err as FileTooLargeError).maxBytes).toBe(10);
    expect(existsSync(path)).toBe(false);
  });

  it("removes the partial file when the source fails, and rethrows its error", async () => {
    const path = join(tempDir(), "broken.bin");
    const source = Readable.from(
      (async function* () {
        yield Buffer.from("part");
        throw new Error("connection reset");
      })(),
    );
    await expect(writeCapped(source, path, 100)).rejects.toThrow("connection reset");
    expect(existsSync(path)).toBe(false);
  });

  it("creates the file with the mode asked for", async () => {
    const path = join(tempDir(), "private.bin");
    await writeCapped(chunks("secret"), path, 100, { mode: 0o600 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe("readOutboundFile", () => {
  it("reads a file to send, and refuses one past the cap for good without reading the rest", async () => {
    const path = join(tempDir(), "note.txt");
    await writeCapped(chunks("hello"), path, 100);
    expect((await readOutboundFile("discord", path)).toString()).toBe("hello");
    // An endless file: what a file growing under a background process looks like to the reader.
    const err = await readOutboundFile("discord", "/dev/zero", 2 * 1024 * 1024).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ platform: "discord", retryable: false });
    expect((err as Error).message).toBe("zero is over the 2.0 MB Herald sends; it was not sent");
  });
});

describe("safeFileName", () => {
  it("replaces unsafe runs, keeps the end of long names and never returns an empty name", () => {
    expect(safeFileName("../my report (final).pdf")).toBe(".._my_report_final_.pdf");
    expect(safeFileName(`${"a".repeat(150)}.txt`)).toBe(`${"a".repeat(96)}.txt`);
    expect(safeFileName("x".repeat(90), 80)).toHaveLength(80);
    expect(safeFileName("")).toBe("file");
  });
});

describe("attachmentKindOf", () => {
  it("maps image, audio and video types and treats the rest as documents", () => {
    expect(attachmentKindOf("image/png")).toBe("image");
    expect(attachmentKindOf("audio/ogg; codecs=opus")).toBe("audio");
    expect(attachmentKindOf("video/mp4")).toBe("video");
    expect(attachmentKindOf("application/pdf")).toBe("document");
    expect(attachmentKindOf(undefined)).toBe("document");
    expect(attachmentKindOf("")).toBe("document");
  });
});

describe("megabytes", () => {
  it("shows one decimal", () => {
    expect(megabytes(1024 * 1024 * 1.5)).toBe("1.5 MB");
    expect(megabytes(20 * 1024 * 1024)).toBe("20.0 MB");
    expect(megabytes(1000)).toBe("0.0 MB");
  });
});
