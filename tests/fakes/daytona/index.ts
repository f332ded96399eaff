/**
 * A fake Daytona on 127.0.0.1: the control API (`/api/sandbox…`: list, create, get, start, stop,
 * delete) and the toolbox each sandbox's `toolboxProxyUrl` points at (`/toolbox/<id>/…`: sessions and
 * their sync exec, `/process/execute`, `files/info`, `files/bulk-download` answered as multipart,
 * `files/bulk-upload` read as multipart), in the shapes `@daytonaio/sdk` parses. Bearer key checked
 * (401 otherwise); `host.rateLimitNext(n)` answers 429; `host.lose(id)` makes every call for it 404.
 * A stopped sandbox's toolbox answers 409, as Daytona's proxy refuses a sandbox that is not started.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, type FakeSandbox, json, type RunningFake, SandboxHost, serve } from "../sandbox-host/index.js";

export type { RunningFake } from "../sandbox-host/index.js";

/** Starts the fake; `apiUrl` for the SDK is `<url>/api`. */
export async function startFakeDaytona(options: {
  apiKey: string;
}): Promise<RunningFake & { apiUrl: string }> {
  const host = new SandboxHost();
  let base = "";
  const fake = await serve(host, async (req, res, url) => {
    if (req.headers.authorization !== `Bearer ${options.apiKey}`)
      return json(res, 401, { statusCode: 401, message: "Invalid API key", error: "Unauthorized" });
    if (host.takeRateLimit())
      return json(
        res,
        429,
        { statusCode: 429, message: "Too many requests" },
        { "retry-after": String(host.retryAfterS) },
      );
    const parts = url.pathname.split("/").filter(Boolean);
    if (parts[0] === "api" && parts[1] === "sandbox") return control(host, base, req, res, parts.slice(2));
    if (parts[0] === "toolbox" && parts[1])
      return toolbox(host, req, res, url, parts[1], parts.slice(2).join("/"));
    json(res, 404, { statusCode: 404, message: `no route ${url.pathname}` });
  });
  base = fake.url;
  return { ...fake, apiUrl: `${fake.url}/api` };
}

function dto(s: FakeSandbox, base: string) {
  const state = s.state === "running" ? "started" : s.state === "stopped" ? "stopped" : "destroyed";
  return {
    id: s.id,
    organizationId: "org-1",
    name: s.name,
    user: "daytona",
    env: {},
    labels: s.labels,
    public: false,
    networkBlockAll: false,
    target: "us",
    cpu: 1,
    gpu: 0,
    memory: 1,
    disk: 3,
    state,
    desiredState: state,
    toolboxProxyUrl: `${base}/toolbox`,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  };
}

async function control(
  host: SandboxHost,
  base: string,
  req: IncomingMessage,
  res: ServerResponse,
  rest: string[],
) {
  const [id, action] = rest;
  if (!id) {
    if (req.method === "GET")
      return json(res, 200, {
        items: host.alive().map((s) => dto(s, base)),
        total: host.alive().length,
        nextCursor: null,
      });
    const input = JSON.parse((await body(req)).toString() || "{}") as {
      name?: string;
      labels?: Record<string, string>;
    };
    return json(res, 200, dto(host.create(input.name ?? "sandbox", input.labels ?? {}), base));
  }
  const sandbox = host.find(id);
  if (!sandbox)
    return json(res, 404, {
      statusCode: 404,
      message: `Sandbox with ID or name ${id} not found`,
      error: "Not Found",
    });
  if (req.method === "GET" && !action) return json(res, 200, dto(sandbox, base));
  if (req.method === "GET" && action === "toolbox-proxy-url")
    return json(res, 200, { url: `${base}/toolbox` });
  if (req.method === "DELETE" && !action) {
    sandbox.state = "deleted";
    return json(res, 200, dto(sandbox, base));
  }
  if (req.method === "POST" && action === "start") {
    if (sandbox.state !== "running") sandbox.starts++;
    sandbox.state = "running";
    return json(res, 200, dto(sandbox, base));
  }
  if (req.method === "POST" && (action === "stop" || action === "pause")) {
    if (sandbox.state === "running") sandbox.stops++;
    sandbox.state = "stopped";
    return json(res, 200, dto(sandbox, base));
  }
  json(res, 404, { statusCode: 404, message: `no route ${action}` });
}

async function toolbox(
  host: SandboxHost,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  id: string,
  path: string,
) {
  const sandbox = host.find(id);
  if (!sandbox) return json(res, 404, { statusCode: 404, message: "sandbox not found" });
  if (sandbox.state !== "running")
    return json(res, 409, { statusCode: 409, message: "sandbox is not started" });
  if (req.method === "POST" && path === "process/session") {
    await body(req);
    return json(res, 201, {});
  }
  if (req.method === "DELETE" && path.startsWith("process/session/")) return void res.writeHead(204).end();
  if (req.method === "POST" && /^process\/session\/[^/]+\/exec$/.test(path)) {
    const input = JSON.parse((await body(req)).toString()) as { command: string };
    const out = await host.run(input.command);
    return json(res, 200, {
      cmdId: "cmd-1",
      exitCode: out.exitCode,
      stdout: out.stdout,
      stderr: out.stderr,
      output: out.stdout + out.stderr,
    });
  }
  if (req.method === "POST" && path === "process/execute") {
    const input = JSON.parse((await body(req)).toString()) as { command: string };
    const out = await host.run(input.command);
    return json(res, 200, { exitCode: out.exitCode, result: out.stdout + out.stderr });
  }
  if (req.method === "GET" && path === "files/info")
    return fileInfo(host, res, url.searchParams.get("path") ?? "");
  if (req.method === "POST" && path === "files/bulk-download") {
    const input = JSON.parse((await body(req)).toString()) as { paths: string[] };
    return download(host, res, input.paths);
  }
  if (req.method === "POST" && path === "files/bulk-upload") return upload(host, req, res);
  json(res, 404, { statusCode: 404, message: `no toolbox route ${path}` });
}

async function fileInfo(host: SandboxHost, res: ServerResponse, path: string) {
  const info = await host.statFile(path);
  if (!info) return json(res, 404, { statusCode: 404, message: `file not found: ${path}` });
  const perm = (info.mode & 0o777).toString(8).padStart(4, "0");
  json(res, 200, {
    name: path.split("/").pop(),
    isDir: info.isDirectory(),
    size: info.size,
    mode: `${info.isDirectory() ? "d" : info.isFile() ? "-" : "p"}rwxr-xr-x`,
    permissions: perm,
    modTime: info.mtime.toISOString(),
    modifiedAt: info.mtime.toISOString(),
    owner: "daytona",
    group: "daytona",
  });
}

async function download(host: SandboxHost, res: ServerResponse, paths: string[]) {
  const boundary = `fake${Date.now()}`;
  const chunks: Buffer[] = [];
  for (const path of paths) {
    const data = await host.readFile(path);
    const name = data ? "file" : "error";
    const content =
      data ??
      Buffer.from(
        JSON.stringify({ message: `file not found: ${path}`, statusCode: 404, code: "FILE_NOT_FOUND" }),
      );
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${path}"\r\nContent-Type: ${data ? "application/octet-stream" : "application/json"}\r\nContent-Length: ${content.length}\r\n\r\n`,
      ),
      content,
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  res.writeHead(200, { "content-type": `multipart/form-data; boundary=${boundary}` });
  res.end(Buffer.concat(chunks));
}

async function upload(host: SandboxHost, req: IncomingMessage, res: ServerResponse) {
  const raw = await body(req);
  const form = await new Request("http://fake/upload", {
    method: "POST",
    headers: { "content-type": req.headers["content-type"] ?? "" },
    body: new Uint8Array(raw),
  }).formData();
  for (let i = 0; form.has(`files[${i}].path`); i++) {
    const path = String(form.get(`files[${i}].path`));
    const file = form.get(`files[${i}].file`) as Blob;
    await host.writeFile(path, new Uint8Array(await file.arrayBuffer()));
  }
  json(res, 200, {});
}
