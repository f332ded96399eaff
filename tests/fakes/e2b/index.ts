/**
 * A fake E2B on 127.0.0.1: the control API (`X-API-KEY`: `POST /v2/sandboxes`, `GET /v2/sandboxes`,
 * `POST /v2/sandboxes/<id>/connect` which resumes a paused one, `POST /sandboxes/<id>/pause`,
 * `DELETE /sandboxes/<id>`) and, on the same port (the SDK's `sandboxUrl`, told apart by the
 * `E2b-Sandbox-Id` header), the in-sandbox daemon envd: Connect RPC with JSON
 * (`/process.Process/Start`, server-streaming in enveloped frames: start, data, end;
 * `/filesystem.Filesystem/Stat`, unary) and `/files` (GET bytes, POST octet-stream), `/health`.
 * `host.rateLimitNext(n)` answers 429 on the control API; `host.lose(id)` makes it 404 there and
 * 502 at envd (the sandbox is not reachable), as the real proxy does.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, json, type RunningFake, SandboxHost, serve } from "../sandbox-host/index.js";

export type { RunningFake } from "../sandbox-host/index.js";

const ENVD_VERSION = "0.6.0";

/** Starts the fake; give the SDK `apiUrl: url` and `sandboxUrl: url`. */
export async function startFakeE2b(options: { apiKey: string }): Promise<RunningFake> {
  const host = new SandboxHost();
  return serve(host, async (req, res, url) => {
    const sandboxId = req.headers["e2b-sandbox-id"];
    if (typeof sandboxId === "string") return envd(host, req, res, url, sandboxId);
    if (req.headers["x-api-key"] !== options.apiKey)
      return json(res, 401, { code: 401, message: "Invalid API key" });
    if (host.takeRateLimit())
      return json(
        res,
        429,
        { code: 429, message: "Rate limit exceeded" },
        { "retry-after": String(host.retryAfterS) },
      );
    const parts = url.pathname.split("/").filter(Boolean);
    const started = (id: string) => ({
      sandboxID: id,
      templateID: "base",
      clientID: "fake",
      envdVersion: ENVD_VERSION,
      envdAccessToken: undefined,
      domain: null,
    });
    if (req.method === "POST" && url.pathname === "/v2/sandboxes") {
      const input = JSON.parse((await body(req)).toString()) as {
        templateID: string;
        metadata?: Record<string, string>;
      };
      return json(res, 201, started(host.create(input.templateID, input.metadata ?? {}).id));
    }
    if (req.method === "GET" && url.pathname === "/v2/sandboxes")
      return json(
        res,
        200,
        host.alive().map((s) => ({
          sandboxID: s.id,
          templateID: "base",
          state: s.state === "running" ? "running" : "paused",
          startedAt: new Date().toISOString(),
          endAt: new Date().toISOString(),
          cpuCount: 2,
          memoryMB: 512,
          diskSizeMB: 1024,
          envdVersion: ENVD_VERSION,
          metadata: s.labels,
          clientID: "fake",
        })),
      );
    const id = parts[0] === "v2" ? parts[2] : parts[1];
    const sandbox = id ? host.find(id) : undefined;
    if (!sandbox) return json(res, 404, { code: 404, message: `sandbox ${id} not found` });
    const action = parts[0] === "v2" ? parts[3] : parts[2];
    if (req.method === "POST" && action === "connect") {
      await body(req);
      if (sandbox.state !== "running") sandbox.starts++;
      sandbox.state = "running";
      return json(res, 200, started(sandbox.id));
    }
    if (req.method === "POST" && action === "pause") {
      await body(req);
      if (sandbox.state !== "running") return json(res, 409, { code: 409, message: "already paused" });
      sandbox.state = "stopped";
      sandbox.stops++;
      return res.writeHead(204).end();
    }
    if (req.method === "DELETE" && !action) {
      sandbox.state = "deleted";
      return res.writeHead(204).end();
    }
    json(res, 404, { code: 404, message: `no route ${url.pathname}` });
  });
}

/** One Connect envelope: flags, big-endian length, the JSON. */
function envelope(message: unknown, flags = 0): Buffer {
  const data = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

async function envd(host: SandboxHost, req: IncomingMessage, res: ServerResponse, url: URL, id: string) {
  const sandbox = host.find(id);
  if (sandbox?.state !== "running")
    return json(res, 502, { sandboxId: id, message: "The sandbox was not found", code: 502 });
  if (url.pathname === "/health") return res.writeHead(204).end();
  if (url.pathname === "/process.Process/Start") {
    const raw = await body(req);
    const input = JSON.parse(raw.subarray(5).toString()) as { process: { args: string[] } };
    res.writeHead(200, { "content-type": "application/connect+json" });
    res.write(envelope({ event: { start: { pid: 1000 + host.commands.length } } }));
    const out = await host.run(input.process.args.at(-1) ?? "", {
      onStdout: (b) => res.write(envelope({ event: { data: { stdout: b.toString("base64") } } })),
      onStderr: (b) => res.write(envelope({ event: { data: { stderr: b.toString("base64") } } })),
    });
    res.write(
      envelope({
        event: { end: { exitCode: out.exitCode, exited: true, status: `exit status ${out.exitCode}` } },
      }),
    );
    return res.end(envelope({}, 2));
  }
  if (url.pathname === "/filesystem.Filesystem/Stat") {
    const input = JSON.parse((await body(req)).toString()) as { path: string };
    const info = await host.statFile(input.path);
    if (!info) return json(res, 404, { code: "not_found", message: `path ${input.path} not found` });
    const seconds = Math.floor(info.mtimeMs / 1000);
    return json(res, 200, {
      entry: {
        name: input.path.split("/").pop(),
        type: info.isDirectory() ? "FILE_TYPE_DIRECTORY" : "FILE_TYPE_FILE",
        path: input.path,
        size: String(info.size),
        mode: info.mode & 0o7777,
        permissions: "-rw-r--r--",
        owner: "user",
        group: "user",
        modifiedTime: new Date(seconds * 1000).toISOString(),
      },
    });
  }
  if (url.pathname === "/files") {
    const path = url.searchParams.get("path") ?? "";
    if (req.method === "GET") {
      const data = await host.readFile(path);
      if (!data) return json(res, 404, { code: 404, message: `file ${path} not found` });
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return res.end(data);
    }
    await host.writeFile(path, await uploaded(req));
    return json(res, 200, [{ name: path.split("/").pop(), type: "file", path }]);
  }
  json(res, 404, { code: "unimplemented", message: `no envd route ${url.pathname}` });
}

/** The bytes of an upload: the body (octet-stream), or its `file` part (multipart, older envd). */
async function uploaded(req: IncomingMessage): Promise<Uint8Array> {
  const raw = await body(req);
  const type = req.headers["content-type"] ?? "";
  if (!type.startsWith("multipart/form-data")) return raw;
  const form = await new Request("http://fake/files", {
    method: "POST",
    headers: { "content-type": type },
    body: new Uint8Array(raw),
  }).formData();
  const file = form.get("file") as Blob | null;
  return new Uint8Array(file ? await file.arrayBuffer() : new ArrayBuffer(0));
}
