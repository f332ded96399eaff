/**
 * A small web site on 127.0.0.1 for the browser tests: a login form (POST, a session cookie, then a
 * greeting), a page rendered by JavaScript, a three-page link chain, a file to download (and one too
 * big), a search form (GET), and pages that reach for a refused address (`refusedUrl`, another server
 * the test watches): a redirect to it, a subresource on it, a WebSocket to it. Records every path.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A running site. */
export interface FakeSite {
  url: string;
  port: number;
  /** Paths (with query) in the order requested. */
  paths: string[];
  /** Bytes of `/files/big.bin`. */
  bigBytes: number;
  close(): Promise<void>;
}

const USERS: Record<string, string> = { alice: "wonderland", bob: "builder" };

function html(res: ServerResponse, body: string, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
  res.end(`<!doctype html><html><head><meta charset="utf-8">${body}</html>`);
}

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie ?? "";
  return header
    .split(/;\s*/)
    .map((p) => p.split("="))
    .find(([k]) => k === name)?.[1];
}

const LOGIN = `<title>Sign in</title></head><body><h1>Members</h1>
<form method="post" action="/login"><label>Username <input name="user"></label>
<label>Password <input name="password" type="password"></label><button>Sign in</button></form></body>`;

/** Starts the site; `refusedUrl` is the server its hostile pages reach for. */
export async function startFakeSite(refusedUrl: string): Promise<FakeSite> {
  const sessions = new Map<string, string>();
  const paths: string[] = [];
  const bigBytes = 3 * 1024 * 1024;
  const refusedWs = refusedUrl.replace(/^http/, "ws");
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://site");
    paths.push(`${url.pathname}${url.search}`);
    const user = sessions.get(cookieOf(req, "sid") ?? "");
    switch (url.pathname) {
      case "/login":
        if (req.method !== "POST") return html(res, LOGIN);
        return void form(req).then((f) => {
          const name = f.get("user") ?? "";
          if (USERS[name] !== f.get("password"))
            return html(res, `<title>Sign in</title></head><body><p>Wrong password</p></body>`, 401);
          const sid = randomBytes(8).toString("hex");
          sessions.set(sid, name);
          res.writeHead(302, { location: "/welcome", "set-cookie": `sid=${sid}; Path=/; HttpOnly` }).end();
        });
      case "/welcome":
        if (!user) return void res.writeHead(302, { location: "/login" }).end();
        return html(
          res,
          `<title>Welcome</title></head><body><h1>Hello, ${user}!</h1><p>You have 3 new letters.</p></body>`,
        );
      case "/js":
        return html(
          res,
          `<title>Loading</title></head><body><div id="app">Loading…</div><script>
          setTimeout(() => { document.title = "Inventory"; document.getElementById("app").innerHTML =
            "<h2>Rendered by script</h2><p>42 items in stock</p><button onclick=\\"this.textContent='Ordered'\\">Order</button>"; }, 150);
          </script></body>`,
        );
      case "/chain/1":
      case "/chain/2":
        return html(
          res,
          `<title>Chain ${url.pathname.at(-1)}</title></head><body><p>Step ${url.pathname.at(-1)}</p><a href="/chain/${Number(url.pathname.at(-1)) + 1}">Next page</a></body>`,
        );
      case "/chain/3":
        return html(
          res,
          `<title>Chain 3</title></head><body><p>The end of the chain: the code is 7341.</p></body>`,
        );
      case "/files":
        return html(
          res,
          `<title>Files</title></head><body><a href="/files/report.csv">Monthly report</a> <a href="/files/big.bin">Big file</a></body>`,
        );
      case "/files/report.csv":
        res.writeHead(200, {
          "content-type": "text/csv",
          "content-disposition": 'attachment; filename="report.csv"',
        });
        return void res.end(`month,total\njanuary,${user ? 100 : 1}\n`);
      case "/files/big.bin":
        res.writeHead(200, { "content-type": "application/octet-stream" });
        return void res.end(Buffer.alloc(bigBytes, 7));
      case "/search":
        return html(
          res,
          `<title>Search</title></head><body><form method="get" action="/results"><input name="q" aria-label="Query"><button>Search</button></form></body>`,
        );
      case "/results":
        return html(
          res,
          `<title>Results</title></head><body><p>Results for ${url.searchParams.get("q")}</p></body>`,
        );
      case "/tabs":
        return html(
          res,
          `<title>Tabs</title></head><body><a href="/chain/3" target="_blank">Open in a new tab</a></body>`,
        );
      case "/redirect-out":
        return void res.writeHead(302, { location: `${refusedUrl}/secret` }).end();
      case "/subresource":
        return html(
          res,
          `<title>Pictures</title></head><body><p>A picture:</p><img src="${refusedUrl}/pixel.png" alt="pixel">
          <script src="${refusedUrl}/script.js"></script><script>fetch("${refusedUrl}/api").catch(() => {});</script></body>`,
        );
      case "/websocket":
        return html(
          res,
          `<title>Live</title></head><body><p id="s">connecting</p><script>
          const ws = new WebSocket("${refusedWs}/ws");
          ws.onopen = () => { document.getElementById("s").textContent = "socket open"; };
          ws.onerror = () => { document.getElementById("s").textContent = "socket failed"; };
          </script></body>`,
        );
      case "/page":
        return html(
          res,
          `<title>Page ${url.searchParams.get("n")}</title></head><body><h1>Page ${url.searchParams.get("n")}</h1>${"<p>Some text of a page, with a <a href='/page'>link</a>.</p>".repeat(40)}</body>`,
        );
      default:
        return html(res, "<title>Not found</title></head><body>not found</body>", 404);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    paths,
    bigBytes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
