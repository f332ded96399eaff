/**
 * The state API a remote worker's tools go through: the HTTP StateClient against the gateway's route on
 * a real HTTP server. Calls arrive with their arguments intact, the gateway's errors come back with
 * their code, and nothing is served without the right key.
 */
import { afterEach, describe, expect, it } from "vitest";
import { probeGateway } from "../../agent/http-state-client.js";
import { STATE_API_PATH } from "../../agent/state-methods.js";
import type { StateClient, TodoItem } from "../../agent/types.js";
import { createStateApiRoute } from "../../app/state-api.js";
import { createHttpStateClient } from "../../app/state-client.js";
import { HeraldError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import { type HttpServerHandle, startHttpServer } from "../../gateway/http/server.js";
import type { CronJobView } from "../../scheduler/types.js";

const KEY = "s3cret-gateway-key";
let server: HttpServerHandle | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A gateway whose StateClient records every call. */
async function gateway(state: StateClient, options: { key?: string } = { key: KEY }) {
  const { key } = options;
  server = await startHttpServer(
    {
      logger: silentLogger(),
      adapters: new Map(),
      routes: [createStateApiRoute({ state, key, logger: silentLogger() })],
    },
    "127.0.0.1",
    0,
  );
  return server.url;
}

const view: CronJobView = {
  id: "j1",
  name: "daily",
  schedule: "every 1d",
  prompt: "report",
  deliver: ["origin"],
  paused: false,
} as unknown as CronJobView;

function recordingState(calls: unknown[][]): StateClient {
  return {
    searchSessions: async (query, options) => {
      calls.push(["searchSessions", query, options]);
      return [{ sessionId: "s1", role: "user", snippet: `hit for ${query}`, createdAt: 1 }] as never;
    },
    cron: {
      create: async (input, caller) => {
        calls.push(["cron.create", input, caller]);
        return view;
      },
      list: async () => [view],
      update: async () => view,
      setPaused: async () => view,
      remove: async (id) => {
        calls.push(["cron.remove", id]);
      },
      runNow: async (id) => {
        throw new HeraldError(`There is no job ${id} of yours. List your jobs to see their ids.`, {
          code: "not_found",
        });
      },
    },
  };
}

describe("state API over HTTP", () => {
  it("carries calls and results both ways, optional arguments included", async () => {
    const calls: unknown[][] = [];
    const url = await gateway(recordingState(calls));
    const client = createHttpStateClient({ url, key: KEY, logger: silentLogger() });

    const hits = await client.searchSessions("deploy", { limit: 3, userId: "u1" });
    expect(hits[0]?.snippet).toBe("hit for deploy");
    await client.searchSessions("plain");
    const caller = { chat: { platform: "telegram", chatId: "42" }, userId: "u1" };
    expect(await client.cron!.create({ schedule: "every 1d", prompt: "report" }, caller)).toEqual(view);
    expect(await client.cron!.remove("j1", caller)).toBeUndefined();
    expect(calls).toEqual([
      ["searchSessions", "deploy", { limit: 3, userId: "u1" }],
      ["searchSessions", "plain", undefined],
      ["cron.create", { schedule: "every 1d", prompt: "report" }, caller],
      ["cron.remove", "j1"],
    ]);
    expect((await probeGateway({ url, key: KEY, logger: silentLogger() })).methods).toContain("cron.create");
  });

  it("gives the gateway's error back with its code, and names a member the gateway lacks", async () => {
    const url = await gateway(recordingState([]));
    const client = createHttpStateClient({ url, key: KEY, logger: silentLogger() });
    const caller = { chat: { platform: "telegram", chatId: "42" }, userId: "u1" };
    const err = await client.cron!.runNow("nope", caller).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({ code: "not_found", message: expect.stringContaining("no job nope") });
    // This gateway has no memory: the worker's tool gets a clear error, not a hang.
    await expect(client.memory!.read("memory", caller)).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringContaining("memory.read"),
    });
  });

  it("validates arguments with the method's schema", async () => {
    const calls: unknown[][] = [];
    const url = await gateway(recordingState(calls));
    const post = (method: string, body: unknown) =>
      fetch(`${url}${STATE_API_PATH}/${method}`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const bad = await post("searchSessions", { args: [42] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_input");
    expect((await post("cron.create", { args: [{ prompt: "x" }, {}] })).status).toBe(400);
    expect((await post("constructor", { args: [] })).status).toBe(404);
    expect((await post("searchSessions", "not an object")).status).toBe(400);
    expect(calls).toEqual([]);
  });

  it("refuses a wrong key, and everything when the gateway has no key", async () => {
    const calls: unknown[][] = [];
    const url = await gateway(recordingState(calls));
    const wrong = createHttpStateClient({ url, key: "guess", logger: silentLogger() });
    await expect(wrong.searchSessions("x")).rejects.toMatchObject({ code: "unauthorized" });
    const noHeader = await fetch(`${url}${STATE_API_PATH}/searchSessions`, {
      method: "POST",
      body: '{"args":["x"]}',
    });
    expect(noHeader.status).toBe(401);
    await server!.close();

    const open = await gateway(recordingState(calls), {});
    const client = createHttpStateClient({ url: open, key: "", logger: silentLogger() });
    const res = await fetch(`${open}${STATE_API_PATH}/searchSessions`, {
      method: "POST",
      headers: { authorization: "Bearer " },
      body: '{"args":["x"]}',
    });
    expect(res.status).toBe(503);
    await expect(client.searchSessions("x")).rejects.toMatchObject({
      message: expect.stringContaining("HERALD_GATEWAY_KEY"),
    });
    expect(calls).toEqual([]);
  });

  it("says which URL could not be reached", async () => {
    const url = await gateway(recordingState([]));
    await server!.close();
    server = undefined;
    const client = createHttpStateClient({ url, key: KEY, logger: silentLogger(), connectRetryMs: 300 });
    await expect(client.searchSessions("x")).rejects.toMatchObject({
      code: "state_error",
      retryable: true,
      message: expect.stringContaining(url),
    });
  });

  it("carries a worker's todo plan to the gateway and back; a malformed plan is refused", async () => {
    const plans = new Map<string, TodoItem[]>();
    const url = await gateway({
      searchSessions: async () => [],
      todo: {
        get: async (key) => plans.get(key) ?? [],
        set: async (key, items) => void plans.set(key, items),
      },
    });
    const client = createHttpStateClient({ url, key: KEY, logger: silentLogger() });
    const plan: TodoItem[] = [{ id: 1, text: "outline", status: "in_progress" }];
    await client.todo!.set("telegram:dm:111", plan);
    expect(await client.todo!.get("telegram:dm:111")).toEqual(plan);
    const bad = [{ id: 1, text: "outline", status: "half-done" }] as unknown as TodoItem[];
    await expect(client.todo!.set("telegram:dm:111", bad)).rejects.toThrow();
    expect(plans.get("telegram:dm:111")).toEqual(plan);
  });
});
