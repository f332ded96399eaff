/**
 * The `ha` toolset against the fake Home Assistant, through home-assistant-js-websocket over `ws`:
 * what each tool answers, what a call changes in the house, which calls wait for approval (and that
 * an approved one then runs), a refused token and an unreachable address named with their fix, and a
 * dropped connection recovered. The fake itself is driven with the library too (subscriptions).
 */
import {
  type Connection,
  callService,
  createConnection,
  createLongLivedTokenAuth,
  getStates,
} from "home-assistant-js-websocket";
import { afterEach, describe, expect, it } from "vitest";
import { createHaTools } from "../../agent/tools/ha/index.js";
import { checkHa, DEFAULT_APPROVE } from "../../agent/tools/ha/settings.js";
import { wsSocketFactory } from "../../agent/tools/ha/socket.js";
import type { ToolContext, ToolOutput } from "../../agent/types.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeHomeAssistant, HA_TOKEN, startFakeHomeAssistant } from "../fakes/homeassistant/index.js";

let fake: FakeHomeAssistant | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await fake?.close();
  fake = undefined;
});

interface Checked {
  command: string;
  ruleIds: string[];
}

function context(approved: Set<string> = new Set(), checked: Checked[] = []): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: "s1",
      sessionKey: "api:dm:s1",
      chat: { platform: "api", chatId: "s1" },
      chatType: "dm",
      userId: "u",
    },
    state: {
      searchSessions: async () => [],
      approvals: {
        check: async (_key, command, ruleIds) => {
          checked.push({ command, ruleIds });
          return approved.delete(command);
        },
        request: async () => ({ id: "r1", expiresAt: Date.now() + 60_000 }),
      },
    },
    logger: silentLogger(),
    homeDir: "/nonexistent",
    progress: () => {},
  };
}

async function toolsFor(
  url: string,
  token = HA_TOKEN,
  mode: "manual" | "deny" | "off" = "manual",
  approve = DEFAULT_APPROVE,
) {
  const set = await createHaTools(
    { ha: { url, token, approve, access: "owners", timeoutMs: 3000 }, exec: { dangerousCommands: mode } },
    { logger: silentLogger() },
  );
  closers.push(() => set.close());
  const run = async (name: string, args: object, ctx = context()): Promise<ToolOutput> => {
    const tool = set.tools.find((t) => t.name === name)!;
    const out = await tool.execute(tool.parameters.parse(args), ctx);
    return typeof out === "string" ? { content: out } : out;
  };
  return { tools: set.tools, run };
}

describe("ha toolset", () => {
  it("is not offered without an address and a token", async () => {
    const set = await createHaTools(
      {
        ha: { approve: DEFAULT_APPROVE, access: "owners", timeoutMs: 1000 },
        exec: { dangerousCommands: "manual" },
      },
      { logger: silentLogger() },
    );
    expect(set.tools).toEqual([]);
  });

  it("lists entities compactly, filtered by domain, area and search", async () => {
    fake = await startFakeHomeAssistant();
    const { tools, run } = await toolsFor(fake.url);
    expect(tools.map((t) => t.name)).toEqual([
      "ha_list_entities",
      "ha_get_state",
      "ha_list_services",
      "ha_call_service",
    ]);
    const kitchen = (await run("ha_list_entities", { area: "kitchen" })).content;
    expect(kitchen).toContain("light.kitchen · Kitchen Light · off · Kitchen");
    expect(kitchen).toContain("sensor.kitchen_temperature · Kitchen Temperature · 21.5 °C · Kitchen");
    expect(kitchen).not.toContain("light.hall");
    const lights = (await run("ha_list_entities", { domain: "light" })).content;
    expect(lights.split("\n").slice(1)).toHaveLength(2);
    expect((await run("ha_list_entities", { search: "garage" })).content).toContain("cover.garage_door");
    expect((await run("ha_list_entities", { area: "Attic" })).content).toContain(
      "Areas: Garage, Hall, Kitchen",
    );
    const one = (await run("ha_list_entities", { limit: 1 })).content;
    expect(one).toContain("… 6 more");
  });

  it("reads one state and the services", async () => {
    fake = await startFakeHomeAssistant();
    const { run } = await toolsFor(fake.url);
    const state = (await run("ha_get_state", { entity_id: "cover.garage_door" })).content;
    expect(state).toContain("cover.garage_door: closed");
    expect(state).toContain('"device_class": "garage"');
    expect((await run("ha_get_state", { entity_id: "light.nowhere" })).isError).toBe(true);
    expect((await run("ha_list_services", {})).content).toContain("light: toggle, turn_off, turn_on");
    expect((await run("ha_list_services", { domain: "light" })).content).toContain(
      "brightness_pct (Brightness in percent)",
    );
  });

  it("calls a service: the light goes on, and the answer says so", async () => {
    fake = await startFakeHomeAssistant();
    const { run } = await toolsFor(fake.url);
    const out = await run("ha_call_service", {
      domain: "light",
      service: "turn_on",
      entity_id: "light.kitchen",
      data: { brightness_pct: 40 },
    });
    expect(out.content).toContain("light.kitchen is now on");
    expect(fake.entities.find((e) => e.entity_id === "light.kitchen")?.state).toBe("on");
    expect(fake.calls).toEqual([
      expect.objectContaining({
        via: "ws",
        domain: "light",
        service: "turn_on",
        data: { brightness_pct: 40 },
      }),
    ]);
    const bad = run("ha_call_service", { domain: "light", service: "explode", entity_id: "light.kitchen" });
    await expect(bad).rejects.toThrow("Home Assistant answered not_found: Service light.explode not found.");
  });

  it("holds locks and garage doors for approval; blinds run; an approved call runs once", async () => {
    fake = await startFakeHomeAssistant();
    const { run } = await toolsFor(fake.url);
    const unlock = { domain: "lock", service: "unlock", entity_id: "lock.front_door" };
    const held = await run("ha_call_service", unlock);
    expect(held.approval).toMatchObject({ ruleId: "ha:lock" });
    expect(held.content).toContain("needs the user's approval");
    const garage = await run("ha_call_service", {
      domain: "cover",
      service: "open_cover",
      entity_id: "cover.garage_door",
    });
    expect(garage.approval?.ruleIds).toEqual(["ha:cover:garage"]);
    // The generic domain reaches a lock too.
    const generic = await run("ha_call_service", {
      domain: "homeassistant",
      service: "turn_off",
      entity_id: "lock.front_door",
    });
    expect(generic.approval?.ruleId).toBe("ha:lock");
    const area = await run("ha_call_service", {
      domain: "cover",
      service: "open_cover",
      target: { area_id: "garage" },
    });
    expect(area.approval).toBeDefined();
    expect(fake.calls).toEqual([]);
    const blind = await run("ha_call_service", {
      domain: "cover",
      service: "open_cover",
      entity_id: "cover.kitchen_blind",
    });
    expect(blind.approval).toBeUndefined();
    expect(fake.entities.find((e) => e.entity_id === "cover.kitchen_blind")?.state).toBe("open");

    const approved = new Set([held.approval!.command]);
    const ran = await run("ha_call_service", unlock, context(approved));
    expect(ran.content).toContain("lock.front_door is now unlocked");
    const again = await run("ha_call_service", unlock, context(approved));
    expect(again.approval).toBeDefined();
  });

  it("refuses sensitive calls under dangerous_commands: deny, and lets them through with off", async () => {
    fake = await startFakeHomeAssistant();
    const denied = await (await toolsFor(fake.url, HA_TOKEN, "deny")).run("ha_call_service", {
      domain: "lock",
      service: "unlock",
      entity_id: "lock.front_door",
    });
    expect(denied).toMatchObject({ isError: true });
    expect(denied.content).toContain("refused");
    const off = await (await toolsFor(fake.url, HA_TOKEN, "off")).run("ha_call_service", {
      domain: "lock",
      service: "unlock",
      entity_id: "lock.front_door",
    });
    expect(off.content).toContain("is now unlocked");
  });

  it("names a refused token and an unreachable address with their fix", async () => {
    fake = await startFakeHomeAssistant();
    const { run } = await toolsFor(fake.url, "wrong-token");
    await expect(run("ha_list_entities", {})).rejects.toThrow(
      /refused the access token \(auth_invalid\).*HOMEASSISTANT_TOKEN/,
    );
    expect(fake.authAttempts).toEqual(["wrong-token"]);
    const closed = await toolsFor("http://127.0.0.1:1");
    await expect(closed.run("ha_list_services", {})).rejects.toThrow(
      /Could not connect to Home Assistant at http:\/\/127\.0\.0\.1:1.*HOMEASSISTANT_URL/,
    );
  });

  it("doctor: checks the address and token live, and names the fix", async () => {
    fake = await startFakeHomeAssistant();
    const section = {
      url: fake.url,
      token: HA_TOKEN,
      approve: DEFAULT_APPROVE,
      access: "owners" as const,
      timeoutMs: 1000,
    };
    expect(await checkHa(section)).toMatchObject({ ok: true, text: expect.stringContaining("API running") });
    const refused = await checkHa({ ...section, token: "bad-token-4711" });
    expect(refused).toMatchObject({ ok: false, text: expect.stringContaining("answered 401 to GET /api/") });
    expect(refused.text).not.toContain("bad-token-4711");
    expect(await checkHa({ approve: [], access: "owners", timeoutMs: 1 })).toMatchObject({
      ok: true,
      text: "ha: off (no Home Assistant configured)",
    });
  });

  it("reconnects after Home Assistant drops the connection", async () => {
    fake = await startFakeHomeAssistant();
    const { run } = await toolsFor(fake.url);
    await run("ha_list_services", {});
    fake.dropSockets();
    const out = await run("ha_get_state", { entity_id: "light.hall" });
    expect(out.content).toContain("light.hall: on");
  });
});

describe("the fake Home Assistant, driven by home-assistant-js-websocket", () => {
  it("answers commands by id and sends subscribed state_changed events", async () => {
    fake = await startFakeHomeAssistant();
    const auth = createLongLivedTokenAuth(fake.url, HA_TOKEN);
    const conn: Connection = await createConnection({
      auth,
      createSocket: wsSocketFactory(auth.wsUrl, HA_TOKEN, 3000),
    });
    closers.push(() => conn.close());
    expect(conn.haVersion).toBe("2025.6.1");
    const events: { data: { entity_id: string; new_state: { state: string } } }[] = [];
    const unsubscribe = await conn.subscribeEvents(
      (e: (typeof events)[number]) => events.push(e),
      "state_changed",
    );
    await callService(conn, "switch", "turn_on", undefined, { entity_id: "switch.kettle" });
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]!.data).toMatchObject({ entity_id: "switch.kettle", new_state: { state: "on" } });
    await unsubscribe();
    fake.setState("switch.kettle", "off");
    const states = await getStates(conn);
    expect(states.find((s) => s.entity_id === "switch.kettle")?.state).toBe("off");
    expect(events).toHaveLength(1);
    const types = fake.received.map((m) => m["type"]);
    expect(types).toEqual(["subscribe_events", "call_service", "unsubscribe_events", "get_states"]);
    const ids = fake.received.map((m) => m["id"] as number);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
