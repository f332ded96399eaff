/**
 * The wire of Bedrock Runtime, as the transport speaks it on the model client's keep-alive fetch:
 * AWS Signature Version 4 over each request (`@smithy/signature-v4`, the signer the AWS SDK uses, one
 * per region and access key so its signing key is made once a day), the
 * `application/vnd.amazon.eventstream` frames of a ConverseStream answer (`@smithy/core`'s event-stream
 * codec: frames cut from the byte stream, prelude and message CRC-checked), and the error AWS names in
 * `x-amzn-errortype` or in an exception frame.
 */
import { createHash, createHmac } from "node:crypto";
import { EventStreamCodec, getChunkedStream } from "@smithy/core/event-streams";
import { SignatureV4 } from "@smithy/signature-v4";
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

type Bytes = string | ArrayBuffer | ArrayBufferView;
const toBinary = (data: Bytes): string | Uint8Array =>
  typeof data === "string"
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** The SHA-256 (and HMAC) the signer is given, on node:crypto. */
class NodeSha256 {
  readonly #hash;
  constructor(secret?: Bytes) {
    this.#hash = secret ? createHmac("sha256", toBinary(secret)) : createHash("sha256");
  }
  update(data: Bytes): void {
    this.#hash.update(toBinary(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

/** One signer per region, service and credentials (a refreshed credential gets a new one). */
const signers = new Map<string, { credentials: AwsCredentials; signer: SignatureV4 }>();

function signerFor(input: SignInput): SignatureV4 {
  const id = `${input.region}/${input.service}/${input.credentials.accessKeyId}`;
  const known = signers.get(id);
  if (known?.credentials === input.credentials) return known.signer;
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: input.service,
    sha256: NodeSha256,
    // As the Bedrock client configures it: no x-amz-content-sha256 header (that is S3's).
    applyChecksum: false,
  });
  if (signers.size > 16) signers.clear();
  signers.set(id, { credentials: input.credentials, signer });
  return signer;
}

/** A path segment or model id as it goes in the URL (RFC 3986: encodeURIComponent leaves `!'()*`). */
export function encodePathSegment(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The request's headers with `x-amz-date`, the session token if any, and the SigV4 `authorization`
 * (every given header signed, and the host, which fetch sets itself).
 */
export async function signRequest(input: SignInput): Promise<Record<string, string>> {
  const { url } = input;
  const signed = await signerFor(input).sign(
    {
      method: input.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...input.headers, host: url.host },
      body: input.body,
    },
    input.date ? { signingDate: input.date } : {},
  );
  const { host: _host, ...headers } = signed.headers;
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

const utf8 = new TextDecoder();
const codec = new EventStreamCodec(
  (bytes) => utf8.decode(bytes),
  (text) => Buffer.from(text, "utf8"),
);

function streamError(what: string): BedrockServiceError {
  return new BedrockServiceError("ModelStreamErrorException", `the event stream had ${what}`, 0);
}

/**
 * The frames of an event-stream body as they arrive, each decoded with its string headers.
 * @throws BedrockServiceError on a frame whose checksum is wrong, or a body that ends inside a frame
 */
export async function* eventMessages(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<EventMessage> {
  const iterator = getChunkedStream(chunks)[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await iterator.next();
    } catch (err) {
      if (err instanceof HeraldError) throw err;
      throw streamError(`a frame cut short (${(err as Error).message})`);
    }
    if (next.done) return;
    let message: ReturnType<EventStreamCodec["decode"]>;
    try {
      message = codec.decode(next.value);
    } catch (err) {
      throw streamError(`a frame that does not decode (${(err as Error).message})`);
    }
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(message.headers))
      if (header.type === "string") headers[name] = header.value;
    const { body } = message;
    yield { headers, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
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
