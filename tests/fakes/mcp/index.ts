/**
 * Fake MCP servers whose tool `dump` answers with `megabytes` MB of text (a server relaying a huge page
 * or file): over streamable HTTP on 127.0.0.1 (as a JSON answer, or as one SSE event), and over stdio
 * (`OVERSIZED_STDIO`, run with node). They record how much they sent and whether the client hung up.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answer, writeHuge } from "./oversized-protocol.mjs";

/** Path of the stdio server (`node <path>`). */
export const OVERSIZED_STDIO = new URL("./oversized-stdio.mjs", import.meta.url).pathname;

/** A running HTTP server. */
export interface OversizedMcp {
  /** The endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Bytes of `dump` answers written so far. */
  sentBytes(): number;
  /** Whether a client closed a `dump` answer before its end. */
  cutShort(): boolean;
  close(): Promise<void>;
}

/** Starts the HTTP server; `sse` answers each request as a `text/event-stream` of one event. */
export async function startOversizedMcp(options: { sse?: boolean } = {}): Promise<OversizedMcp> {
  let sent = 0;
  let cut = false;
  const write = (res: ServerResponse) => (text: string) =>
    new Promise<boolean>((resolve) => {
      if (res.destroyed) return resolve(false);
      sent += text.length;
      if (res.write(text)) resolve(true);
      else {
        res.once("drain", () => resolve(true));
        res.once("close", () => resolve(false));
      }
    });
  const server = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const reply = answer(JSON.parse(body));
    if (!reply) return void res.writeHead(202).end();
    res.writeHead(200, { "content-type": options.sse ? "text/event-stream" : "application/json" });
    const out = write(res);
    if (options.sse) await out("event: message\ndata: ");
    if ("small" in reply) await out(JSON.stringify(reply.small));
    else await writeHuge(reply.id, reply.huge, out);
    if (options.sse) await out("\n\n");
    if (res.destroyed) cut = true;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sentBytes: () => sent,
    cutShort: () => cut,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
