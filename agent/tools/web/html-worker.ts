/**
 * Worker-thread entry of `createWorkerHtmlConverter`: converts one page at a time with `htmlToMarkdown`,
 * off the main thread. Messages: in `{ id, html, baseUrl }`, out `{ id, title, markdown }` or `{ id, error }`.
 */
import { parentPort } from "node:worker_threads";
import { htmlToMarkdown } from "./html-to-markdown.js";

parentPort?.on("message", (job: { id: number; html: string; baseUrl: string }) => {
  try {
    parentPort?.postMessage({ id: job.id, ...htmlToMarkdown(job.html, job.baseUrl) });
  } catch (err) {
    parentPort?.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) });
  }
});
