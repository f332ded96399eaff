import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertInChild } from "../../agent/documents/convert-process.js";
import {
  DocumentRefusedError,
  extractDocument,
  extractDocumentFromBuffer,
  guessBinaryType,
  isBinary,
  NO_TEXT_LAYER_NOTICE,
  sniffDocument,
} from "../../agent/documents/index.js";
import { makeDocx, makeDocxBomb, makePdf, makePdfBomb, TINY_PNG } from "../helpers/document-fixtures.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "herald-documents-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fixture(name: string, bytes: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

describe("extractDocument", () => {
  it("reads the text layer of a PDF page by page", async () => {
    const path = await fixture(
      "report.pdf",
      makePdf([["Quarterly report", "Revenue grew (a lot)"], ["Second page"]]),
    );
    const doc = await extractDocument(path);
    expect(doc).toMatchObject({ kind: "pdf", pages: 2, truncated: false });
    expect(doc.noTextLayer).toBeUndefined();
    expect(doc.text).toContain("Quarterly report");
    expect(doc.text).toContain("Revenue grew (a lot)");
    expect(doc.text.indexOf("--- page 2 of 2 ---")).toBeLessThan(doc.text.indexOf("Second page"));
  });

  it("says when a PDF has no text layer", async () => {
    const path = await fixture("scan.pdf", makePdf([[], []]));
    const doc = await extractDocument(path);
    expect(doc).toMatchObject({ kind: "pdf", pages: 2, text: "", noTextLayer: true });
    expect(doc.notice).toBe(NO_TEXT_LAYER_NOTICE);
    expect(doc.notice).toContain("this PDF has no text layer (a scan?)");
  });

  it("reads a DOCX as raw text", async () => {
    const path = await fixture("letter.docx", await makeDocx(["Dear reader,", "Tom & Jerry <3"]));
    const doc = await extractDocument(path);
    expect(doc.kind).toBe("docx");
    expect(doc.text).toBe("Dear reader,\n\nTom & Jerry <3");
  });

  it.each([
    ["notes.md", "markdown", "# Title\nbody"],
    ["data.csv", "csv", "a,b\n1,2"],
    ["config.json", "json", '{"a": 1}'],
    ["main.ts", "code", "export const x = 1;"],
    ["README", "text", "plain words"],
    ["page.html", "html", "<p>hi</p>"],
  ])("reads %s as %s", async (name, kind, content) => {
    const doc = await extractDocument(await fixture(name, content));
    expect(doc).toMatchObject({ kind, text: content, truncated: false, totalChars: content.length });
  });

  it("cuts text at maxChars and says so", async () => {
    const path = await fixture("long.txt", "x".repeat(5000));
    const doc = await extractDocument(path, { maxChars: 100 });
    expect(doc).toMatchObject({ truncated: true, totalChars: 5000 });
    expect(doc.text).toHaveLength(100);
  });

  it("refuses binaries with a guess of the type", async () => {
    const path = await fixture("photo.md", TINY_PNG);
    const err = await extractDocument(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentRefusedError);
    expect(err).toMatchObject({ reason: "binary", typeGuess: "PNG image", code: "invalid_input" });
    expect((err as Error).message).toMatch(/binary file \(PNG image, \d+ bytes\)/);
  });

  it("refuses office formats it cannot convert, and files over maxBytes", async () => {
    const xls = await fixture(
      "sheet.xlsx",
      Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(64, 1), Buffer.from([0])]),
    );
    await expect(extractDocument(xls)).rejects.toMatchObject({ reason: "unsupported" });
    const big = await fixture("big.txt", "y".repeat(2000));
    await expect(extractDocument(big, { maxBytes: 1000 })).rejects.toMatchObject({ reason: "too_large" });
  });

  it("says a damaged PDF could not be read", async () => {
    const path = await fixture("broken.pdf", "%PDF-1.4\nthis is not really a pdf\n");
    await expect(extractDocument(path)).rejects.toMatchObject({ reason: "corrupt" });
  });

  it("names a missing file", async () => {
    await expect(extractDocument(join(dir, "nope.txt"))).rejects.toMatchObject({ code: "not_found" });
  });

  it("stops when the signal fires", async () => {
    const path = await fixture("abort.pdf", makePdf([["a"]]));
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(extractDocument(path, { signal: controller.signal })).rejects.toThrow("stop");
  });
});

describe("PDF and DOCX in a child process", () => {
  it("refuses files that unpack to more than the converter may hold, and this process stays small", async () => {
    const before = process.memoryUsage().rss;
    for (const [name, bytes, kind] of [
      ["bomb.pdf", await makePdfBomb(1500), "PDF"],
      ["bomb.docx", await makeDocxBomb(300), "DOCX"],
    ] as const) {
      const err = await extractDocumentFromBuffer(bytes, { fileName: name }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DocumentRefusedError);
      expect(err).toMatchObject({ reason: "too_large", typeGuess: kind.toLowerCase() });
      expect((err as Error).message).toMatch(
        new RegExp(`^${name.replace(".", "\\.")} could not be read as ${kind}: it needed more than 512 MB`),
      );
    }
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  }, 60_000);

  it("stops a conversion past its time, and at once when the signal fires", async () => {
    const bytes = await makePdfBomb(1500);
    await expect(convertInChild("pdf", bytes, 1000, { timeoutMs: 300 })).rejects.toMatchObject({
      why: "time",
      message: "it took longer than 0.3 s",
    });
    const controller = new AbortController();
    const converting = convertInChild("pdf", bytes, 1000, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("the turn was stopped")), 200);
    const started = Date.now();
    await expect(converting).rejects.toThrow("the turn was stopped");
    expect(Date.now() - started).toBeLessThan(2_000);
  }, 30_000);
});

describe("extractDocumentFromBuffer", () => {
  it("trusts the bytes over the declared type", async () => {
    const doc = await extractDocumentFromBuffer(makePdf([["from the web"]]), { mimeType: "text/plain" });
    expect(doc.kind).toBe("pdf");
    expect(doc.text).toContain("from the web");
  });

  it("uses the media type when there is no file name", async () => {
    const doc = await extractDocumentFromBuffer(Buffer.from('{"ok":true}'), {
      mimeType: "application/json; charset=utf-8",
    });
    expect(doc.kind).toBe("json");
  });

  it("decodes UTF-16 with a byte-order mark", async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo", "utf16le")]);
    const doc = await extractDocumentFromBuffer(utf16, { fileName: "a.txt" });
    expect(doc.text).toBe("héllo");
  });
});

describe("isBinary", () => {
  it.each([
    ["plain ASCII", Buffer.from("hello\nworld\n"), false],
    ["UTF-8 with accents and emoji", Buffer.from("héllo wörld 🎉\n".repeat(100)), false],
    ["an empty buffer", Buffer.alloc(0), false],
    ["a NUL byte", Buffer.from("abc\0def"), true],
    ["a PNG", TINY_PNG, true],
    ["random high bytes", Buffer.from(Array.from({ length: 512 }, (_, i) => 0x80 + (i % 64))), true],
    ["control characters", Buffer.from("\x01\x02\x03\x04\x05abc"), true],
  ])("%s → %s", (_label, bytes, expected) => {
    expect(isBinary(bytes)).toBe(expected);
  });

  it("does not count a multi-byte character cut by the sample's end", () => {
    const text = Buffer.from(`${"a".repeat(8191)}é${"b".repeat(100)}`);
    expect(isBinary(text)).toBe(false);
  });

  it("guesses common binary types and sniffs documents by their bytes", async () => {
    expect(guessBinaryType(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]))).toBe("ELF executable");
    expect(guessBinaryType(Buffer.from("SQLite format 3\0"))).toBe("SQLite database");
    expect(sniffDocument(await makeDocx(["x"]), { fileName: "a.bin" })).toEqual({
      type: "document",
      kind: "docx",
    });
    const zipHead = Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(100, 7), Buffer.from([0])]);
    expect(sniffDocument(zipHead, { fileName: "big.docx" })).toEqual({ type: "document", kind: "docx" });
    expect(sniffDocument(zipHead, { fileName: "a.zip" })).toEqual({
      type: "binary",
      typeGuess: "ZIP archive",
    });
  });
});
