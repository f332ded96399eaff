/**
 * A small HTTP server on 127.0.0.1 for fetch tests: it counts TCP connections (so a test can prove a
 * refused fetch never connected), records each request (method, path, headers, body) and answers
 * `/redirect?to=<url>` with a 302, `/stream` with a first chunk and the rest only at the next `release()`,
 * anything else with a JSON echo of the request.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the server read it. */
export interface EchoRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A running echo server. */
export interface EchoServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  requests: EchoRequest[];
  /** Lets the `/stream` responses open now send their last chunk and end. */
  release(): void;
  close(): Promise<void>;
}

/** Starts an echo server on a random loopback port. */
export async function startEchoServer(): Promise<EchoServer> {
  let connections = 0;
  const requests: EchoRequest[] = [];
  const waiting: (() => void)[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const path = req.url ?? "/";
    requests.push({ method: req.method ?? "", path, headers: req.headers, body });
    const url = new URL(path, "http://echo");
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end();
    } else if (url.pathname === "/stream") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first chunk;");
      waiting.push(() => res.end(" last chunk"));
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, path, contentType: req.headers["content-type"], body }));
    }
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    requests,
    release: () => {
      for (const finish of waiting.splice(0)) finish();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
