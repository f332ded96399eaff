/**
 * read_file's pager on streams of chunks: the same lines however the text is cut into chunks (line
 * breaks, "\r\n", multi-byte characters and surrogate pairs across chunk ends), UTF-16 bytes, and a
 * line far longer than memory would allow paged in bounded memory.
 */
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../agent/tools/files/line-splitter.js";
import { type PageLimits, pageLines } from "../../agent/tools/files/pager.js";

const limits = (over: Partial<PageLimits> = {}): PageLimits => ({
  offset: 1,
  limit: 100,
  maxLineChars: 2000,
  maxOutputChars: 100_000,
  ...over,
});

/** Every line `LineSplitter` hands over for `chunks`, as [number, text, cut]. */
function split(chunks: string[], maxLineChars = 2000): [number, string, number][] {
  const out: [number, string, number][] = [];
  const splitter = new LineSplitter({ maxLineChars, onLine: (n, text, cut) => out.push([n, text, cut]) });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return out;
}

/** `text` cut into chunks at every position in `cuts`. */
function cutAt(text: string, cuts: number[]): string[] {
  const out: string[] = [];
  let last = 0;
  for (const at of [...cuts, text.length]) {
    out.push(text.slice(last, at));
    last = at;
  }
  return out;
}

describe("LineSplitter", () => {
  it("finds the same lines wherever the chunks end", () => {
    const text = "alpha\r\nbeta\n\ngam\rma\r\ndelta";
    const whole = split([text]);
    expect(whole).toEqual([
      [1, "alpha", 0],
      [2, "beta", 0],
      [3, "", 0],
      // A lone "\r" is part of the line (line numbers agree with `sed -n` and `grep -n`).
      [4, "gam\rma", 0],
      [5, "delta", 0],
    ]);
    for (let a = 0; a <= text.length; a++)
      for (let b = a; b <= text.length; b++) expect(split(cutAt(text, [a, b]))).toEqual(whole);
  });

  it("ends the last line at a final line break, and counts an empty text as no lines", () => {
    expect(split(["one\ntwo\n"]).map(([n]) => n)).toEqual([1, 2]);
    expect(split(["\n"])).toEqual([[1, "", 0]]);
    expect(split(["", ""])).toEqual([]);
  });

  it("keeps maxLineChars of a long line and counts the rest, across chunks and a final \\r", () => {
    expect(split(["abcdef", "ghij\r", "\nnext"], 4)).toEqual([
      [1, "abcd", 6],
      [2, "next", 0],
    ]);
    // The cut never leaves half of a surrogate pair.
    expect(split(["abc😀def\n"], 4)).toEqual([[1, "abc", 5]]);
  });

  it("builds no line it is not asked for", () => {
    const built: number[] = [];
    const splitter = new LineSplitter({
      maxLineChars: 10,
      wants: (n) => n === 2,
      onLine: (n) => built.push(n),
    });
    splitter.push("a\nb\nc\nd");
    splitter.end();
    expect(built).toEqual([2]);
    expect(splitter.lines).toBe(4);
  });
});

describe("pageLines", () => {
  it("decodes UTF-8 bytes cut inside a character, and drops a byte-order mark", async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("héllo wörld\n€uro\n")]);
    const whole = await pageLines([bytes], limits());
    expect(whole.body).toBe("     1\théllo wörld\n     2\t€uro");
    for (let at = 1; at < bytes.length; at++) {
      const page = await pageLines([bytes.subarray(0, at), bytes.subarray(at)], limits());
      expect(page.body).toBe(whole.body);
    }
  });

  it("decodes UTF-16 byte chunks in either byte order", async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\r\nwörld\r\n", "utf16le")]);
    const page = await pageLines([le.subarray(0, 5), le.subarray(5)], limits(), { encoding: "utf-16le" });
    expect(page).toMatchObject({ body: "     1\théllo\n     2\twörld", totalLines: 2 });
    const be = Buffer.from(le.toString("utf16le"), "utf16le").swap16();
    expect((await pageLines([be], limits(), { encoding: "utf-16be" })).body).toBe(page.body);
  });

  it("pages a 512 MB line streamed in 1 MB chunks in bounded memory", async () => {
    const chunk = "x".repeat(1024 * 1024);
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    async function* source() {
      for (let i = 0; i < 512; i++) {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        yield chunk;
      }
      yield "\nsecond line\n";
    }
    const page = await pageLines(source(), limits({ limit: 1 }));
    expect(page.body).toBe(
      `     1\t${"x".repeat(2000)} … [line cut: ${(512 * 1024 * 1024 - 2000).toLocaleString("en-US")} more characters]`,
    );
    expect(page).toMatchObject({ lastShown: 1, totalLines: 2 });
    // The line alone is 512 MB (past V8's longest string); the pager held a chunk at a time.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("stops when the signal fires", async () => {
    const controller = new AbortController();
    async function* source() {
      yield "one\n";
      controller.abort(new Error("stopped by the test"));
      yield "two\n";
    }
    await expect(pageLines(source(), limits(), { signal: controller.signal })).rejects.toThrow(
      "stopped by the test",
    );
  });
});
