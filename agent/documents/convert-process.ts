/**
 * PDF and DOCX conversion in a child process with bounded memory and time. What a converter holds
 * follows what the file unpacks to: a 300 KB PDF whose page is a compressed stream of 1.5 GB of spaces
 * held 3 GB, and a 1 MB DOCX of 300 MB of XML ended a 128 MB heap. The child gets its own heap limit,
 * is killed when its resident memory passes `maxRssBytes` (PDF.js keeps decoded streams outside the
 * heap) or when it runs past `timeoutMs`, and the gateway only ever sees its capped answer.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { moduleDir } from "../../core/module-dir.js";
import type { ConverterAnswer } from "./converter-child.js";

/** Bounds of one conversion. */
export interface ConvertLimits {
  /** The child's resident memory at which it is killed. @defaultValue 512 MiB */
  maxRssBytes?: number;
  /** The child's V8 heap (`--max-old-space-size`), in MiB. @defaultValue 256 */
  maxHeapMb?: number;
  /** @defaultValue 120_000 */
  timeoutMs?: number;
}

/** How a conversion ended when it gave no answer. */
export class ConversionStoppedError extends Error {
  constructor(
    readonly why: "memory" | "time" | "crashed",
    message: string,
  ) {
    super(message);
    this.name = "ConversionStoppedError";
  }
}

const RSS_POLL_MS = 50;
const PAGE_BYTES = 4096;

/** `node <child>`, or through tsx's loader when running from the .ts sources (tsx, vitest). */
function childCommand(): string[] {
  const here = moduleDir(import.meta.url, "agent/documents");
  const compiled = join(here, "converter-child.js");
  if (existsSync(compiled)) return [compiled];
  // Resolved from the working directory, as `--import tsx` is.
  return ["--import", "tsx", join(here, "converter-child.ts")];
}

/** Resident bytes of `pid` (Linux /proc), or undefined where it cannot be read. */
function residentBytes(pid: number): number | undefined {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
    return Number.isFinite(pages) ? pages * PAGE_BYTES : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Converts `bytes` (a PDF or a DOCX) in a child process and resolves with its answer (`ok: false` when
 * the converter threw: a damaged file). Rejects with `ConversionStoppedError` when the child was
 * stopped (memory, time) or died, and with the signal's reason when aborted.
 */
export function convertInChild(
  kind: "pdf" | "docx",
  bytes: Uint8Array,
  maxChars: number,
  options: ConvertLimits & { signal?: AbortSignal | undefined } = {},
): Promise<ConverterAnswer> {
  const { maxRssBytes = 512 * 1024 * 1024, maxHeapMb = 256, timeoutMs = 120_000, signal } = options;
  signal?.throwIfAborted();
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${maxHeapMb}`, ...childCommand(), kind, String(maxChars)],
    { env: { PATH: process.env["PATH"] ?? "" }, stdio: ["pipe", "pipe", "pipe"] },
  );
  return new Promise<ConverterAnswer>((resolve, reject) => {
    let stopped: ConversionStoppedError | undefined;
    const stop = (why: ConversionStoppedError) => {
      stopped ??= why;
      child.kill("SIGKILL");
    };
    const watch = setInterval(() => {
      const rss = child.pid === undefined ? undefined : residentBytes(child.pid);
      if (rss !== undefined && rss > maxRssBytes)
        stop(
          new ConversionStoppedError(
            "memory",
            `it needed more than ${Math.round(maxRssBytes / 1024 / 1024)} MB`,
          ),
        );
    }, RSS_POLL_MS);
    const timer = setTimeout(
      () =>
        stop(new ConversionStoppedError("time", `it took longer than ${Math.round(timeoutMs / 100) / 10} s`)),
      timeoutMs,
    );
    const onAbort = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    // The answer is at most the text cut near maxChars, JSON-escaped.
    const maxAnswerBytes = maxChars * 6 + 1024 * 1024;
    const out: Buffer[] = [];
    let outBytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxAnswerBytes) stop(new ConversionStoppedError("crashed", "its answer was too long"));
      else out.push(chunk);
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString("utf8");
    });
    child.stdin.on("error", () => {
      // The child died before it read everything: its exit says why.
    });
    child.stdin.end(bytes);
    child.on("error", (err) =>
      stop(new ConversionStoppedError("crashed", `it could not start: ${err.message}`)),
    );
    child.on("close", (code, sig) => {
      clearInterval(watch);
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (signal?.aborted) return reject(signal.reason);
      if (stopped) return reject(stopped);
      if (code === 0) {
        try {
          return resolve(JSON.parse(Buffer.concat(out).toString("utf8")) as ConverterAnswer);
        } catch {
          // Fall through: an exit 0 without a whole answer is a crash too.
        }
      }
      const outOfMemory = /heap out of memory|Allocation failed/i.test(stderr);
      reject(
        outOfMemory
          ? new ConversionStoppedError("memory", `it needed more than its ${maxHeapMb} MB heap`)
          : new ConversionStoppedError("crashed", `the converter ended (${sig ?? `exit ${code}`})`),
      );
    });
  });
}
