/**
 * The gateway's workspace store over HTTP (`/internal/workspaces/`, behind the request guard as the
 * gateway serves it): a worker's `HttpHandoverRemote` round trip, and what a stranger or a hostile
 * worker gets: nothing without the key, a 400 naming the entry for a hostile tar or manifest, and
 * nothing of theirs stored.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pack as tarPack } from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HttpHandoverRemote, type Manifest, WorkspaceHub } from "../../agent/exec/handover/index.js";
import { createWorkspaceApiRoute } from "../../app/workspace-api.js";
import { silentLogger } from "../../core/logger.js";
import { createRequestGuard } from "../../gateway/http/guard.js";
import { type HttpServerHandle, startHttpServer } from "../../gateway/http/server.js";
import { SqliteState, SqliteWorkspaceGenerations } from "../../sessions/index.js";

const KEY = "s3cret-gateway-key";
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
let server: HttpServerHandle;
let state: SqliteState;
let dir: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-wsapi-"));
  state = SqliteState.open(":memory:");
  const hub = new WorkspaceHub({
    dir: join(dir, "workspace-store"),
    generations: new SqliteWorkspaceGenerations<Manifest>(state.database),
    quotaBytes: 1024 * 1024,
  });
  server = await startHttpServer(
    {
      logger: silentLogger(),
      adapters: new Map(),
      guard: createRequestGuard({
        apiKeyless: true,
        dashboardOpen: true,
        corsOrigins: [],
        logger: silentLogger(),
      }),
      nodeRoutes: [createWorkspaceApiRoute({ hub, key: KEY, logger: silentLogger() })],
    },
    "127.0.0.1",
    0,
  );
});
afterEach(async () => {
  await server.close();
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

async function tar(entries: { name: string; body?: string; type?: "symlink" }[]): Promise<Buffer> {
  const pack = tarPack();
  for (const e of entries)
    if (e.type) pack.entry({ name: e.name, type: e.type, linkname: "/etc/shadow" });
    else pack.entry({ name: e.name }, e.body ?? "");
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const put = (body: Buffer, key = KEY) =>
  fetch(`${server.url}/internal/workspaces/-/blobs`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-tar" },
    body: new Uint8Array(body),
  });

describe("the workspace store over HTTP", () => {
  it("round-trips blobs and generations for a worker with the key", async () => {
    const remote = new HttpHandoverRemote({ url: server.url, key: KEY, maxBlobBytes: 1024 * 1024 });
    expect(await remote.head("ws-1")).toEqual({ generation: 0, manifest: {} });
    const body = Buffer.from("hello from worker A");
    const hash = sha(body.toString());
    expect(await remote.missing([hash])).toEqual([hash]);
    await remote.upload([{ sha256: hash, sizeBytes: body.length, read: async () => body }]);
    expect(await remote.missing([hash])).toEqual([]);
    const file = { kind: "file" as const, sha256: hash, sizeBytes: body.length, mode: 0o644 };
    expect(await remote.commit("ws-1", 0, { set: { "notes.md": file }, removed: [] }, "a")).toEqual({
      generation: 1,
      fastForward: true,
    });
    expect(await remote.head("ws-1", 1)).toEqual({ generation: 1 });
    expect((await remote.head("ws-1", 0)).manifest).toEqual({ "notes.md": file });
    const got: string[] = [];
    await remote.download([hash], async (_sha, data) => {
      got.push(data.toString());
    });
    expect(got).toEqual(["hello from worker A"]);
  });

  it("refuses a request without the key, or with another", async () => {
    expect((await fetch(`${server.url}/internal/workspaces/ws-1`)).status).toBe(401);
    expect((await put(await tar([{ name: sha("x"), body: "x" }]), "wrong")).status).toBe(401);
    const remote = new HttpHandoverRemote({ url: server.url, key: "wrong", maxBlobBytes: 1024 });
    await expect(remote.head("ws-1")).rejects.toThrow(/refused HERALD_GATEWAY_KEY/);
  });

  it.each([
    ["a name leaving the store", [{ name: "../../state.db", body: "x" }], /not named by a SHA-256/],
    ["an absolute name", [{ name: "/etc/passwd", body: "x" }], /not named by a SHA-256/],
    ["a link", [{ name: sha("x"), type: "symlink" as const }], /is a symlink, not a file/],
    ["content not matching its name", [{ name: sha("x"), body: "y" }], /does not match its hash/],
  ])("refuses a tar with %s and stores nothing of it", async (_what, entries, message) => {
    const res = await put(await tar(entries));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(readdirSync(dir)).not.toContain("state.db");
    const store = join(dir, "workspace-store");
    const stored = existsSync(store) ? readdirSync(store, { recursive: true }).map(String) : [];
    expect(stored.filter((name) => name.length > 2)).toEqual([]);
  });

  it("refuses a commit whose manifest leaves the workspace, or names blobs never uploaded", async () => {
    const remote = new HttpHandoverRemote({ url: server.url, key: KEY, maxBlobBytes: 1024 * 1024 });
    const body = Buffer.from("x");
    await remote.upload([{ sha256: sha("x"), sizeBytes: 1, read: async () => body }]);
    const file = { kind: "file" as const, sha256: sha("x"), sizeBytes: 1, mode: 0o644 };
    await expect(remote.commit("ws-1", 0, { set: { "../x": file }, removed: [] }, "a")).rejects.toThrow(
      /leaves the workspace/,
    );
    await expect(
      remote.commit("ws-1", 0, { set: { l: { kind: "link", target: "/etc" } }, removed: [] }, "a"),
    ).rejects.toThrow(/points outside the workspace/);
    await expect(
      remote.commit("ws-1", 0, { set: { f: { ...file, sha256: sha("never") } }, removed: [] }, "a"),
    ).rejects.toThrow(/not uploaded/);
    expect(await remote.head("ws-1")).toEqual({ generation: 0, manifest: {} });
  });
});
