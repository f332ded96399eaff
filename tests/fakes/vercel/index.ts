/**
 * A fake Vercel Sandbox API on 127.0.0.1, in the shapes `@vercel/sandbox` validates with zod: create
 * (`POST /v3/sandboxes`), get with `resume` (`GET /v2/sandboxes/<name>`: a stopped sandbox gets a new
 * session, `resumed: true`), list, delete, a session's `stop`, `cmd` answered as NDJSON (the command,
 * its log lines as they come, the finished command), `fs/read` (octet-stream, 404 when missing) and
 * `fs/write` (a gzip tar, unpacked with `tar` under `x-cwd`). Bearer token and `teamId` checked (401,
 * 403); `host.rateLimitNext(n)` answers 429; `host.lose(name)` makes it 404; a command on a stopped
 * session answers 410, as the API does.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, type FakeSandbox, json, type RunningFake, SandboxHost, serve } from "../sandbox-host/index.js";

export type { RunningFake } from "../sandbox-host/index.js";

interface Vm {
  session: string;
  sandbox: FakeSandbox;
}

/** Starts the fake. */
export async function startFakeVercel(options: { token: string; teamId: string }): Promise<RunningFake> {
  const host = new SandboxHost();
  const sessions = new Map<string, Vm>();
  const current = new Map<string, string>(); // sandbox id → its session
  const newSession = (sandbox: FakeSandbox) => {
    const session = `sess_${randomBytes(5).toString("hex")}`;
    sessions.set(session, { session, sandbox });
    current.set(sandbox.id, session);
    return session;
  };
  return serve(host, async (req, res, url) => {
    if (req.headers.authorization !== `Bearer ${options.token}`)
      return json(res, 401, { error: { code: "unauthorized", message: "Invalid token" } });
    if (url.searchParams.get("teamId") !== options.teamId)
      return json(res, 403, { error: { code: "forbidden", message: "Not authorized for this team" } });
    if (host.takeRateLimit())
      return json(
        res,
        429,
        { error: { code: "rate_limited", message: "Too many requests" } },
        { "retry-after": String(host.retryAfterS) },
      );
    const parts = url.pathname.split("/").filter(Boolean);
    const view = (sandbox: FakeSandbox, extra: Record<string, unknown> = {}) =>
      json(res, 200, {
        sandbox: sandboxJson(sandbox, current.get(sandbox.id) ?? ""),
        session: sessionJson(current.get(sandbox.id) ?? "", sandbox),
        routes: [],
        ...extra,
      });
    if (req.method === "POST" && (url.pathname === "/v3/sandboxes" || url.pathname === "/v2/sandboxes")) {
      const input = JSON.parse((await body(req)).toString()) as { name?: string; projectId?: string };
      if (!input.projectId)
        return json(res, 400, { error: { code: "bad_request", message: "projectId is required" } });
      const sandbox = host.create(input.name ?? `sbx-${randomBytes(3).toString("hex")}`);
      newSession(sandbox);
      return view(sandbox);
    }
    if (req.method === "GET" && url.pathname === "/v2/sandboxes")
      return json(res, 200, {
        sandboxes: host.alive().map((s) => sandboxJson(s, current.get(s.id) ?? "")),
        pagination: { count: host.alive().length, next: null },
      });
    if (parts[0] === "v2" && parts[1] === "sandboxes" && parts[2] === "sessions" && parts[3]) {
      const vm = sessions.get(parts[3]);
      if (!vm || !host.find(vm.sandbox.id))
        return json(res, 404, { error: { code: "not_found", message: "Session not found" } });
      return session(
        host,
        req,
        res,
        vm,
        parts.slice(4).join("/"),
        () => current.get(vm.sandbox.id) === vm.session,
      );
    }
    if (parts[0] === "v2" && parts[1] === "sandboxes" && parts[2] && parts.length === 3) {
      const sandbox = host.find(decodeURIComponent(parts[2]));
      if (!sandbox) return json(res, 404, { error: { code: "not_found", message: "Sandbox not found" } });
      if (req.method === "DELETE") {
        sandbox.state = "deleted";
        return json(res, 200, { sandbox: sandboxJson(sandbox, "") });
      }
      const resumed = sandbox.state === "stopped" && url.searchParams.get("resume") === "true";
      if (resumed) {
        sandbox.state = "running";
        sandbox.starts++;
        newSession(sandbox);
      }
      return view(sandbox, { resumed });
    }
    json(res, 404, { error: { code: "not_found", message: `no route ${url.pathname}` } });
  });
}

function sessionJson(id: string, sandbox: FakeSandbox) {
  const now = Date.now();
  return {
    id,
    memory: 2048,
    vcpus: 1,
    region: "iad1",
    timeout: 2_700_000,
    status: sandbox.state === "running" ? "running" : "stopped",
    requestedAt: now,
    createdAt: now,
    updatedAt: now,
    cwd: "/vercel/sandbox",
  };
}

function sandboxJson(sandbox: FakeSandbox, session: string) {
  const now = Date.now();
  return {
    name: sandbox.name,
    persistent: true,
    createdAt: now,
    updatedAt: now,
    currentSessionId: session,
    status: sandbox.state === "running" ? "running" : "stopped",
  };
}

async function session(
  host: SandboxHost,
  req: IncomingMessage,
  res: ServerResponse,
  vm: Vm,
  path: string,
  isCurrent: () => boolean,
) {
  const running = vm.sandbox.state === "running" && isCurrent();
  if (path === "stop" && req.method === "POST") {
    if (running) vm.sandbox.stops++;
    vm.sandbox.state = "stopped";
    return json(res, 200, {
      session: sessionJson(vm.session, vm.sandbox),
      sandbox: sandboxJson(vm.sandbox, vm.session),
    });
  }
  if (!running)
    return json(res, 410, { error: { code: "sandbox_stopped", message: "The sandbox session is stopped" } });
  if (path === "cmd" && req.method === "POST") return command(host, req, res, vm);
  if (path === "fs/read" && req.method === "POST") {
    const input = JSON.parse((await body(req)).toString()) as { path: string };
    const data = await host.readFile(input.path);
    if (!data) return json(res, 404, { error: { code: "file_not_found", message: "File not found" } });
    res.writeHead(200, { "content-type": "application/octet-stream" });
    return res.end(data);
  }
  if (path === "fs/write" && req.method === "POST") {
    const data = await body(req);
    const dir = String(req.headers["x-cwd"] ?? "/");
    const code = await new Promise<number>((resolve) => {
      const tar = spawn("tar", ["-xzf", "-", "-C", dir], { stdio: ["pipe", "ignore", "ignore"] });
      tar.on("close", (c) => resolve(c ?? 1));
      tar.stdin.end(data);
    });
    if (code !== 0)
      return json(res, 400, { error: { code: "bad_request", message: "could not unpack the files" } });
    return json(res, 200, {});
  }
  json(res, 404, { error: { code: "not_found", message: `no route ${path}` } });
}

async function command(host: SandboxHost, req: IncomingMessage, res: ServerResponse, vm: Vm) {
  const input = JSON.parse((await body(req)).toString()) as {
    command: string;
    args: string[];
    cwd?: string;
    wait?: boolean;
  };
  const line = [input.command, ...input.args];
  const cmd = {
    id: `cmd_${randomBytes(5).toString("hex")}`,
    name: input.command,
    args: input.args,
    cwd: input.cwd ?? "/vercel/sandbox",
    sessionId: vm.session,
    startedAt: Date.now(),
  };
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.write(`${JSON.stringify({ command: { ...cmd, exitCode: null } })}\n`);
  const script = line[0] === "/bin/sh" && line[1] === "-c" ? (line[2] ?? "") : line.join(" ");
  const out = await host.run(script, {
    onStdout: (b) => res.write(`${JSON.stringify({ stream: "stdout", data: b.toString() })}\n`),
    onStderr: (b) => res.write(`${JSON.stringify({ stream: "stderr", data: b.toString() })}\n`),
  });
  res.end(`${JSON.stringify({ command: { ...cmd, exitCode: out.exitCode, durationMs: 1 } })}\n`);
}
