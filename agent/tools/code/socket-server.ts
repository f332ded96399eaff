/**
 * The execution's end of the tool socket: a Unix socket server taking one JSON line per connection
 * (`{type: "call", token, tool, args}` or `{type: "result", token, value}`) and answering one JSON line.
 * A request without the execution's token gets nothing and the connection is closed.
 */
import { timingSafeEqual } from "node:crypto";
import { chmod } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { z } from "zod";

/** The largest request line (a tool's arguments), bytes. */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

const request = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("call"),
    token: z.string(),
    tool: z.string().min(1).max(200),
    args: z.record(z.string(), z.unknown()).default({}),
  }),
  z.object({ type: z.literal("result"), token: z.string(), value: z.string() }),
]);

/** What a call gets back: the tool's text, or why it was refused. */
export type CallAnswer = { ok: true; content: string; isError: boolean } | { ok: false; error: string };

/** Handlers of the requests. Neither may throw (a throw is answered as a refusal). */
export interface ToolSocketHandlers {
  call(tool: string, args: Record<string, unknown>): Promise<CallAnswer>;
  /** The script's return value, as JSON text. */
  result(value: string): void;
}

/** A listening tool socket. */
export interface ToolSocket {
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Listens on `path` (mode 0666: the sandbox's user connects; the token is the key). */
export async function listenToolSocket(
  path: string,
  token: string,
  handlers: ToolSocketHandlers,
): Promise<ToolSocket> {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => socket.destroy());
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf(10);
      if (end < 0) {
        if (buffer.length > MAX_REQUEST_BYTES) socket.destroy();
        return;
      }
      socket.off("data", onData);
      void answer(buffer.subarray(0, end).toString("utf8")).then(
        (reply) => {
          if (reply === undefined) socket.destroy();
          else socket.end(`${JSON.stringify(reply)}\n`);
        },
        () => socket.destroy(),
      );
    };
    socket.on("data", onData);
  });
  const answer = async (line: string): Promise<CallAnswer | { ok: true } | undefined> => {
    let parsed: z.infer<typeof request>;
    try {
      parsed = request.parse(JSON.parse(line));
    } catch {
      return { ok: false, error: "not a request of the herald-tools library" };
    }
    if (!sameToken(parsed.token, token)) return undefined;
    if (parsed.type === "result") {
      handlers.result(parsed.value);
      return { ok: true };
    }
    try {
      return await handlers.call(parsed.tool, parsed.args);
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  await chmod(path, 0o666);
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
