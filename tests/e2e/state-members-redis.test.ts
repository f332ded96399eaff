/**
 * Every StateClient member reaches a worker on another process: a real `herald gateway` on Redis serves
 * every method of the table (each feature's member included, as the gateway wires them in-process), and
 * a worker's HTTP client has a function for each that the gateway answers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { probeGateway } from "../../agent/http-state-client.js";
import { createHttpStateClient } from "../../app/state-client.js";
import { stateMethods } from "../../app/state-methods.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  await llm?.close();
  cluster = undefined;
  llm = undefined;
});

describe("the state API on Redis", () => {
  it("serves every StateClient method, and a worker's client reaches each member", {
    timeout: 60_000,
  }, async () => {
    llm = await startFakeLlm();
    cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
    await cluster.startGateway();
    const options = { url: cluster.url, key: cluster.key, logger: silentLogger() };

    const { methods } = await probeGateway(options);
    expect([...methods].sort()).toEqual(Object.keys(stateMethods).sort());

    const client = createHttpStateClient(options);
    const members = client as unknown as Record<string, unknown>;
    for (const path of Object.keys(stateMethods)) {
      const [member, method] = path.split(".") as [string, string | undefined];
      const fn = method
        ? (members[member] as Record<string, unknown> | undefined)?.[method]
        : members[member];
      expect(typeof fn, path).toBe("function");
    }
    // One read per member, answered by the gateway's own state.
    const caller = { chat: { platform: "api", chatId: "c1" }, userId: "u1" };
    expect(await client.searchSessions("nothing yet")).toEqual([]);
    expect(await client.todo!.get("api:dm:u1")).toEqual([]);
    expect(await client.cron!.list(caller)).toEqual([]);
    expect((await client.memory!.read("user", caller)).entries).toEqual([]);
    expect((await client.skills!.list(caller)).skills.length).toBeGreaterThan(0);
    expect(await client.taskBoard!.list()).toEqual([]);
    expect(await client.approvals!.check("api:dm:u1", "rm -rf /tmp/x", ["recursive_delete"])).toBe(false);
    expect((await client.delegate!.wait("no-such-group", 0, 0)).children).toEqual([]);
  });
});
