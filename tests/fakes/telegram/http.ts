/** HTTP plumbing of the fake Bot API: request bodies (JSON, urlencoded, multipart) and JSON answers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FakeUpload } from "./types.js";

export interface ParsedBody {
  params: Record<string, unknown>;
  files: Record<string, FakeUpload>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** A form value: objects and arrays arrive JSON-encoded (as grammY sends them). */
function formValue(value: string): unknown {
  if (/^[[{]/.test(value)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

/**
 * Parses multipart/form-data leniently, as the Bot API does: grammY writes `content-disposition:` without
 * a space and an unquoted `filename=`.
 */
function parseMultipart(body: Buffer, boundary: string): ParsedBody {
  const params: Record<string, unknown> = {};
  const files: Record<string, FakeUpload> = {};
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(start + delimiter.length, next);
    start = next;
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd < 0) continue;
    const headers = part.subarray(0, headerEnd).toString("utf8");
    // The part's content ends before the CRLF that precedes the next delimiter.
    let content = part.subarray(headerEnd + 4);
    if (content.subarray(-2).toString() === "\r\n") content = content.subarray(0, -2);
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (!name) continue;
    const fileName = /filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
    if (fileName !== undefined) {
      files[name] = { fileName, sizeBytes: content.length, content: Buffer.from(content) };
    } else {
      params[name] = formValue(content.toString("utf8"));
    }
  }
  return { params, files };
}

/** Reads a Bot API request's parameters from its query string and body. */
export async function readParams(req: IncomingMessage, url: URL): Promise<ParsedBody> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const body = await readBody(req);
  const type = req.headers["content-type"] ?? "";
  if (body.length === 0) return { params, files: {} };
  if (type.includes("application/json")) {
    return { params: { ...params, ...(JSON.parse(body.toString("utf8")) as object) }, files: {} };
  }
  if (type.includes("multipart/form-data")) {
    const boundary = /boundary=([^;]+)/.exec(type)?.[1] ?? "";
    const parsed = parseMultipart(body, boundary);
    return { params: { ...params, ...parsed.params }, files: parsed.files };
  }
  if (type.includes("application/x-www-form-urlencoded")) {
    for (const [k, v] of new URLSearchParams(body.toString("utf8"))) params[k] = formValue(v);
  }
  return { params, files: {} };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

/** The Bot API's error envelope. */
export function apiError(
  res: ServerResponse,
  status: number,
  description: string,
  parameters?: Record<string, unknown>,
): void {
  sendJson(res, status, {
    ok: false,
    error_code: status,
    description,
    ...(parameters ? { parameters } : {}),
  });
}

/** A Telegram-like description for an injected status. */
export function defaultDescription(status: number, retryAfter?: number): string {
  switch (status) {
    case 400:
      return 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0';
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden: bot was blocked by the user";
    case 409:
      return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";
    case 429:
      return `Too Many Requests: retry after ${retryAfter ?? 1}`;
    case 502:
      return "Bad Gateway";
    default:
      return status >= 500 ? "Internal Server Error" : `Error ${status}`;
  }
}
