/**
 * The model client's fetch over real sockets: plain HTTP and TLS (a throw-away self-signed certificate),
 * streamed bodies, status and headers, aborts.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeFetch } from "../../core/node-fetch.js";

const dir = mkdtempSync(join(tmpdir(), "herald-tls-"));
let key: Buffer;
let cert: Buffer;

function handler(req: IncomingMessage, res: ServerResponse): void {
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    if (req.url === "/slow") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      return; // never ends: the client aborts
    }
    res.writeHead(201, { "content-type": "application/json", "x-echo": String(req.headers["x-test"]) });
    res.write('{"method":"');
    setTimeout(() => res.end(`${req.method}","body":${JSON.stringify(body)}}`), 5);
  });
}

beforeAll(() => {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  key = readFileSync(join(dir, "key.pem"));
  cert = readFileSync(join(dir, "cert.pem"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function listen(server: ReturnType<typeof createHttpServer>) {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

describe("createNodeFetch", () => {
  for (const tls of [false, true]) {
    it(`${tls ? "https" : "http"}: sends method, headers and body; returns status, headers and the streamed body`, async () => {
      const server = tls ? createHttpsServer({ key, cert }, handler) : createHttpServer(handler);
      const port = await listen(server);
      const fetchLike = createNodeFetch({ ca: cert });
      const res = await fetchLike(`${tls ? "https" : "http"}://127.0.0.1:${port}/x`, {
        method: "POST",
        headers: { "x-test": "yes", "content-type": "application/json" },
        body: '{"q":1}',
      });
      expect(res.status).toBe(201);
      expect(res.headers.get("x-echo")).toBe("yes");
      expect(await res.json()).toEqual({ method: "POST", body: '{"q":1}' });
      server.closeAllConnections();
      server.close();
    });
  }

  it("aborts a streaming response mid-body with an AbortError", async () => {
    const server = createHttpServer(handler);
    const port = await listen(server);
    const controller = new AbortController();
    const res = await createNodeFetch()(`http://127.0.0.1:${port}/slow`, { signal: controller.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("first");
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
    server.closeAllConnections();
    server.close();
  });

  it("aborts a body read by async iteration (as the SDK reads streams) with an AbortError", async () => {
    const server = createHttpServer(handler);
    const port = await listen(server);
    const controller = new AbortController();
    const res = await createNodeFetch()(`http://127.0.0.1:${port}/slow`, { signal: controller.signal });
    const chunks: string[] = [];
    const read = (async () => {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        chunks.push(new TextDecoder().decode(chunk));
        controller.abort();
      }
    })();
    await expect(read).rejects.toMatchObject({ name: "AbortError" });
    expect(chunks.join("")).toContain("first");
    server.closeAllConnections();
    server.close();
  });

  it("rejects with AbortError when aborted before the answer", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      createNodeFetch()("http://127.0.0.1:9/", { signal: controller.signal }),
    ).rejects.toMatchObject({
      name: "AbortError",
    });
  });
});
