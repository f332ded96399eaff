/**
 * A fake web server on 127.0.0.1 with the pages an agent's fetch meets: an article inside site chrome,
 * a 3-hop redirect chain, a redirect to loopback, a 50 MB streamed body, a server that stalls, an image,
 * compressed pages, a PDF, text and JSON. It records every path requested and how the 50 MB stream ended.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { articlePage, hubPage, longPage, PDF_BYTES, PNG_BYTES } from "./pages.js";

/** A running page server. `port` lets a test build URLs on other host names that resolve to it. */
export interface FakeWeb {
  url: string;
  port: number;
  /** Paths (with query) in the order requested. */
  paths: string[];
  /** The User-Agent header of each request, in the same order. */
  userAgents: string[];
  /** The 50 MB stream: bytes written before it stopped, and whether the client hung up first. */
  huge: { bytesSent: number; clientClosed: boolean; finished: Promise<void> };
  close(): Promise<void>;
}

/** Size of the /huge body. */
export const HUGE_BYTES = 50 * 1024 * 1024;

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers = {}): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Streams HUGE_BYTES of HTML in 64 KB chunks with backpressure; stops when the client goes away. */
function streamHuge(res: ServerResponse, stats: FakeWeb["huge"], done: () => void): void {
  const chunk = Buffer.alloc(64 * 1024, "<p>filler filler filler filler filler filler filler filler</p>\n");
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.write("<!DOCTYPE html><html><head><title>Huge</title></head><body>");
  res.once("close", () => {
    stats.clientClosed = stats.bytesSent < HUGE_BYTES;
    done();
  });
  const pump = () => {
    while (stats.bytesSent < HUGE_BYTES && !res.destroyed) {
      stats.bytesSent += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end("</body></html>");
  };
  pump();
}

/** Starts the page server on a random loopback port. */
export async function startFakeWeb(): Promise<FakeWeb> {
  const paths: string[] = [];
  const userAgents: string[] = [];
  let finish: () => void = () => {};
  const huge = {
    bytesSent: 0,
    clientClosed: false,
    finished: new Promise<void>((resolve) => {
      finish = resolve;
    }),
  };
  const timers = new Set<NodeJS.Timeout>();
  let origin = "";
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin);
    paths.push(`${url.pathname}${url.search}`);
    userAgents.push(req.headers["user-agent"] ?? "");
    const html = "text/html; charset=utf-8";
    switch (url.pathname) {
      case "/article":
        return send(res, 200, html, articlePage());
      case "/hop/1":
        return send(res, 302, html, "", { location: "/hop/2" });
      case "/hop/2":
        return send(res, 301, html, "", { location: `${origin}/hop/3` });
      case "/hop/3":
        return send(res, 307, html, "", { location: "../article" });
      case "/loop":
        return send(res, 302, html, "", { location: "/loop" });
      case "/to-loopback":
        return send(res, 302, html, "", { location: `${origin}/article` });
      case "/to-metadata":
        return send(res, 302, html, "", { location: "http://169.254.169.254/latest/meta-data/" });
      case "/to-file":
        return send(res, 302, html, "", { location: "file:///etc/passwd" });
      case "/huge":
        return streamHuge(res, huge, finish);
      case "/huge-declared":
        res.writeHead(200, { "content-type": html, "content-length": String(HUGE_BYTES) });
        return void res.write("<html>");
      case "/slow": {
        res.writeHead(200, { "content-type": html });
        res.write("<html><head><title>Slow</title></head><body><p>first bytes");
        const timer = setTimeout(() => res.end("</p></body></html>"), 20_000);
        timers.add(timer);
        return;
      }
      case "/image.png":
        return send(res, 200, "image/png", PNG_BYTES);
      case "/gzip":
        return send(res, 200, html, gzipSync(articlePage()), { "content-encoding": "gzip" });
      case "/br":
        return send(res, 200, html, brotliCompressSync(articlePage()), { "content-encoding": "br" });
      case "/hub":
        return send(res, 200, html, hubPage());
      case "/long":
        return send(res, 200, html, longPage(Number(url.searchParams.get("n") ?? "200")));
      case "/latin1":
        return send(
          res,
          200,
          "text/plain; charset=iso-8859-1",
          Buffer.from("Caf\xe9 cr\xe8me, na\xefve", "latin1"),
        );
      case "/notes.txt":
        return send(res, 200, "text/plain", "Plain notes.\nSecond line.");
      case "/data.json":
        return send(res, 200, "application/json", '{"name":"herald","tags":["a","b"]}');
      case "/report.pdf":
        return send(res, 200, "application/pdf", PDF_BYTES);
      default:
        return send(
          res,
          404,
          html,
          "<html><head><title>Not found</title></head><body><h1>404</h1></body></html>",
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    port,
    paths,
    userAgents,
    huge,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
