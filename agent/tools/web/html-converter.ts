/**
 * Where HTML → Markdown runs. In the calling thread it blocks the event loop for the whole conversion
 * (about a second for a 2 MB page on a 2-CPU host), which a gateway serving
 * other chats cannot afford; `createWorkerHtmlConverter` runs it on a worker thread instead and can
 * cancel it mid-page.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";
import { moduleDir } from "../../../core/module-dir.js";
import { WebError } from "./errors.js";
import type { HtmlConverter } from "./types.js";

/**
 * Converts in the calling thread (the default of `extractPage`: no thread to start or stop). The
 * readability, DOM and Markdown libraries load on the first page (~350 ms that start-up never pays).
 */
export const inlineHtmlConverter: HtmlConverter = async (html, baseUrl, signal) => {
  if (signal?.aborted) throw new WebError("aborted", baseUrl, `the conversion of ${baseUrl} was cancelled`);
  const { htmlToMarkdown } = await import("./html-to-markdown.js");
  return htmlToMarkdown(html, baseUrl);
};

/** A converter on a worker thread, with `close()` to end the thread (idempotent). */
export interface WorkerHtmlConverter {
  convert: HtmlConverter;
  close(): Promise<void>;
}

interface Job {
  id: number;
  html: string;
  baseUrl: string;
  resolve: (value: { title: string; markdown: string }) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * The worker: the compiled html-worker.js beside this file, or, when running from the .ts sources (tsx,
 * vitest), a bootstrap that registers tsx's loader in the worker thread (loader hooks are per thread)
 * and imports html-worker.ts.
 */
function spawnWorker(): Worker {
  // `node:worker_threads` (~1.6 MiB resident) loads with the first conversion, not with the web tools.
  const { Worker } = createRequire(import.meta.url)(
    "node:worker_threads",
  ) as typeof import("node:worker_threads");
  const here = moduleDir(import.meta.url, "agent/tools/web");
  const compiled = join(here, "html-worker.js");
  if (existsSync(compiled)) return new Worker(compiled);
  const source = pathToFileURL(join(here, "html-worker.ts")).href;
  // Resolved from the working directory, as `--import tsx` is. (Importing "tsx/esm" alone does not take in a worker.)
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { eval: true });
}

/**
 * Starts conversions on one worker thread (started on first use, unref'd so it never holds the process
 * open). Jobs run one at a time in order. Aborting the running job terminates the thread — the only way
 * to stop synchronous parsing — and the next job starts a fresh one; aborting a queued job just drops it.
 */
export function createWorkerHtmlConverter(): WorkerHtmlConverter {
  let worker: Worker | undefined;
  let nextId = 1;
  const queue: Job[] = [];
  let running: Job | undefined;

  const finish = (job: Job) => {
    job.signal?.removeEventListener("abort", job.onAbort);
    if (running === job) running = undefined;
  };

  const failAll = (err: unknown) => {
    for (const job of [running, ...queue.splice(0)]) {
      if (!job) continue;
      finish(job);
      job.reject(err);
    }
  };

  const start = (): Worker => {
    const thread = spawnWorker();
    thread.unref();
    thread.on("message", (message: { id: number; title?: string; markdown?: string; error?: string }) => {
      const job = running;
      if (!job || job.id !== message.id) return;
      finish(job);
      if (message.error !== undefined) job.reject(new Error(`HTML conversion failed: ${message.error}`));
      else job.resolve({ title: message.title ?? "", markdown: message.markdown ?? "" });
      pump();
    });
    thread.on("error", (err) => {
      if (worker === thread) worker = undefined;
      failAll(err);
    });
    thread.on("exit", () => {
      if (worker === thread) worker = undefined;
    });
    return thread;
  };

  const pump = () => {
    if (running) return;
    const job = queue.shift();
    if (!job) return;
    running = job;
    worker ??= start();
    worker.postMessage({ id: job.id, html: job.html, baseUrl: job.baseUrl });
  };

  const convert: HtmlConverter = (html, baseUrl, signal) =>
    new Promise((resolve, reject) => {
      const cancelled = () => new WebError("aborted", baseUrl, `the conversion of ${baseUrl} was cancelled`);
      if (signal?.aborted) return reject(cancelled());
      const job: Job = { id: nextId++, html, baseUrl, resolve, reject, signal, onAbort: () => {} };
      job.onAbort = () => {
        const index = queue.indexOf(job);
        if (index >= 0) queue.splice(index, 1);
        if (running === job) {
          const stuck = worker;
          worker = undefined;
          void stuck?.terminate();
        }
        finish(job);
        reject(cancelled());
        pump();
      };
      signal?.addEventListener("abort", job.onAbort, { once: true });
      queue.push(job);
      pump();
    });

  return {
    convert,
    async close() {
      const thread = worker;
      worker = undefined;
      failAll(new WebError("aborted", "", "the HTML converter was closed"));
      await thread?.terminate();
    },
  };
}
