/**
 * The wire of Bedrock Runtime, as the transport speaks it on the model client's keep-alive fetch:
 * AWS Signature Version 4 over each request (the signing key made once per day, region and secret),
 * the `application/vnd.amazon.eventstream` frames of a ConverseStream answer (prelude and message
 * CRC-checked), and the error AWS names in `x-amzn-errortype` or in an exception frame.
 */
import { createHash, createHmac } from "node:crypto";
import { HeraldError } from "../../core/errors.js";

/** AWS credentials as the SDK's credential chain resolves them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** What one request to sign holds. */
export interface SignInput {
  method: string;
  url: URL;
  /** Lower-case names; all are signed. */
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** @defaultValue now */
  date?: Date | undefined;
}

/** The signing key of the last day/region/service per secret (a secret changes rarely). */
const signingKeys = new Map<string, { scope: string; key: Buffer }>();

function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const scope = `${day}/${region}/${service}`;
  const known = signingKeys.get(secret);
  if (known?.scope === scope) return known.key;
  const kDate = createHmac("sha256", `AWS4${secret}`).update(day).digest();
  const kRegion = createHmac("sha256", kDate).update(region).digest();
  const kService = createHmac("sha256", kRegion).update(service).digest();
  const key = createHmac("sha256", kService).update("aws4_request").digest();
  if (signingKeys.size > 16) signingKeys.clear();
  signingKeys.set(secret, { scope, key });
  return key;
}

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves `!'()*`). */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** A path segment or model id as it goes in the URL. */
export const encodePathSegment = uriEncode;

/**
 * The request's headers with `x-amz-date`, the session token if any, and the SigV4 `authorization`
 * (AWS's rules for services other than S3: the path encoded once more, every given header signed).
 */
export function signRequest(input: SignInput): Record<string, string> {
  const { url, credentials } = input;
  const stamp = (input.date ?? new Date()).toISOString().replace(/[:-]|\.\d{3}/g, "");
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = { ...input.headers, "x-amz-date": stamp };
  if (credentials.sessionToken) headers["x-amz-security-token"] = credentials.sessionToken;
  const signed: Record<string, string> = { ...headers, host: url.host };
  const names = Object.keys(signed).sort();
  const canonicalHeaders = names.map((n) => `${n}:${signed[n]!.trim().replace(/\s+/g, " ")}\n`).join("");
  const signedHeaders = names.join(";");
  const path = url.pathname.split("/").map(uriEncode).join("/") || "/";
  const query = [...url.searchParams]
    .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
    .sort()
    .join("&");
  const payloadHash = createHash("sha256").update(input.body).digest("hex");
  const canonical = `${input.method}\n${path}\n${query}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${stamp}\n${scope}\n${createHash("sha256").update(canonical).digest("hex")}`;
  const key = signingKey(credentials.secretAccessKey, day, input.region, input.service);
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  headers["authorization"] =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/**
 * An error Bedrock answered: `name` is AWS's error type (`ThrottlingException`), `status` the HTTP
 * status (0 for an exception inside the stream), `retryAfter` the header as given.
 */
export class BedrockServiceError extends HeraldError {
  readonly status: number;
  readonly retryAfter: string | undefined;
  constructor(type: string, message: string, status: number, retryAfter?: string | null) {
    super(message || type, { code: "model_error" });
    this.name = type;
    this.status = status;
    this.retryAfter = retryAfter ?? undefined;
  }
}

/** The error of a non-2xx answer: type from `x-amzn-errortype` (else the body's `__type`), message from the body. */
export async function httpError(response: Response): Promise<BedrockServiceError> {
  const text = await response.text().catch(() => "");
  let body: { message?: string; Message?: string; __type?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not JSON (a proxy's page): the text is the message.
  }
  const type = (response.headers.get("x-amzn-errortype") ?? body.__type ?? `Http${response.status}`)
    .split(":")[0]!
    .split("#")
    .at(-1)!;
  const message = body.message ?? body.Message ?? text.slice(0, 300);
  return new BedrockServiceError(type, message, response.status, response.headers.get("retry-after"));
}

/** One decoded frame: its string headers and its payload. */
export interface EventMessage {
  headers: Record<string, string>;
  body: Buffer;
}

const CRC_TABLE = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

function crc32(bytes: Buffer, start: number, end: number): number {
  let crc = -1;
  for (let i = start; i < end; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** Bytes each header value type takes after its type byte (-1: a 2-byte length follows). */
const VALUE_SIZES: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 6: -1, 7: -1, 8: 8, 9: 16 };

function decodeHeaders(bytes: Buffer, start: number, end: number): Record<string, string> {
  const headers: Record<string, string> = {};
  let at = start;
  while (at < end) {
    const nameLength = bytes[at]!;
    const name = bytes.toString("utf8", at + 1, at + 1 + nameLength);
    at += 1 + nameLength;
    const type = bytes[at++]!;
    const size = VALUE_SIZES[type];
    if (size === undefined) throw streamError(`an event header of unknown type ${type}`);
    if (size >= 0) {
      at += size;
      continue;
    }
    const length = bytes.readUInt16BE(at);
    if (type === 7) headers[name] = bytes.toString("utf8", at + 2, at + 2 + length);
    at += 2 + length;
  }
  return headers;
}

function streamError(what: string): BedrockServiceError {
  return new BedrockServiceError("ModelStreamErrorException", `the event stream had ${what}`, 0);
}

/**
 * Splits event-stream bytes into frames as they arrive; `push` calls `onMessage` for each whole frame
 * and keeps the rest. @throws BedrockServiceError on a frame whose checksum is wrong
 */
export class EventStreamDecoder {
  #pending: Buffer = Buffer.alloc(0);

  push(bytes: Uint8Array, onMessage: (message: EventMessage) => void): void {
    const chunk = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    let buf = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (buf.length >= 12) {
      const total = buf.readUInt32BE(0);
      if (total < 16) throw streamError("a frame too short to be one");
      if (buf.length < total) break;
      const headersLength = buf.readUInt32BE(4);
      if (
        crc32(buf, 0, 8) !== buf.readUInt32BE(8) ||
        crc32(buf, 0, total - 4) !== buf.readUInt32BE(total - 4)
      )
        throw streamError("a frame with a wrong checksum");
      const headers = decodeHeaders(buf, 12, 12 + headersLength);
      onMessage({ headers, body: buf.subarray(12 + headersLength, total - 4) });
      buf = buf.subarray(total);
    }
    this.#pending = buf;
  }

  /** Whether a partial frame is left. */
  get partial(): boolean {
    return this.#pending.length > 0;
  }
}

/**
 * The error an `exception` (or `error`) frame carries: `throttlingException` names
 * `ThrottlingException`, as the SDK names it.
 */
export function frameError(message: EventMessage): BedrockServiceError {
  const type = message.headers[":exception-type"] ?? message.headers[":error-code"] ?? "ModelStreamError";
  let text = message.headers[":error-message"] ?? "";
  try {
    text = (JSON.parse(message.body.toString("utf8")) as { message?: string }).message ?? text;
  } catch {
    // An error frame's body may be empty.
  }
  return new BedrockServiceError(type.charAt(0).toUpperCase() + type.slice(1), text, 0);
}
