/**
 * Home Assistant by whom a turn acts for, over the wire: one gateway in front of the fake Telegram with
 * the `ha` toolset pointed at the fake Home Assistant. The owner (on the allowlist) turns a light on; a
 * user the owner admitted by a pairing code to chat cannot reach the house: the `ha` tools are absent
 * from their requests, refused if called or loaded, and their own `/approve` unlocks nothing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeHomeAssistant, HA_TOKEN, startFakeHomeAssistant } from "../fakes/homeassistant/index.js";
import { messageText } from "../fakes/llm/index.js";
import { ask, command, type PathContext, toolResults } from "./owner-paths.js";
import { pair, type Rig, startRig } from "./owner-rig.js";

const OWNER = 100;
const PAIRED = 300;

const unlock = {
  name: "ha_call_service",
  arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
};
const lightOn = {
  name: "ha_call_service",
  arguments: { domain: "light", service: "turn_on", entity_id: "light.kitchen" },
};

describe("Home Assistant: only owners reach the house unless ha.access says everyone", () => {
  let home: FakeHomeAssistant;
  let rig: Rig;
  let owner: PathContext;
  let paired: PathContext;
  const stateOf = (id: string) => home.entities.find((e) => e.entity_id === id)?.state;
  const toolsOf = (key: string) => {
    const request = rig.h.llm.requests.find((r) =>
      r.messages.some((m) => m.role === "user" && messageText(m).includes(`[[${key}]]`)),
    );
    expect(request, `a request for [[${key}]]`).toBeDefined();
    return {
      tools: (request!.tools ?? []).map((t) => t.function.name),
      system: messageText(request!.messages.find((m) => m.role === "system")),
    };
  };

  beforeAll(async () => {
    home = await startFakeHomeAssistant();
    rig = await startRig(OWNER, {
      TELEGRAM_ALLOWED_USERS: String(OWNER),
      HOMEASSISTANT_URL: home.url,
      HOMEASSISTANT_TOKEN: HA_TOKEN,
      HERALD_TOOLS_EAGER: "core,memory,skills,ha",
    });
    owner = rig;
    paired = { ...rig, me: PAIRED };
    await pair(paired);
  }, 40_000);
  afterAll(async () => {
    await rig?.stop();
    await home?.close();
  });

  it("a paired user's turn has no ha tools; a call, a load_tools and their own /approve unlock nothing", async () => {
    rig.model.plan("h-paired", [unlock], [{ name: "load_tools", arguments: { toolsets: ["ha"] } }]);
    const said = () => rig.fake.botMessages(PAIRED).map((m) => m.text ?? "");
    rig.fake.userSends({ chatId: PAIRED, fromId: PAIRED, text: "please [[h-paired]]" });
    await vi.waitFor(
      () => expect(said().some((t) => /done \[\[h-paired\]\]|needs your approval/.test(t))).toBe(true),
      {
        timeout: 20_000,
      },
    );
    const answer = await command(paired, "/approve", /Nothing is waiting|done \[\[h-paired\]\]|unlocked/);
    expect(stateOf("lock.front_door")).toBe("locked");
    expect(answer).toMatch(/Nothing is waiting/);
    const seen = toolsOf("h-paired");
    expect(seen.tools.filter((t) => t.startsWith("ha_"))).toEqual([]);
    expect(seen.system).not.toContain("ha_call_service");
    const [called, loaded] = toolResults(rig.h, "h-paired");
    expect(called).toMatch(/^error: there is no tool named 'ha_call_service'/);
    expect(loaded).not.toMatch(/ha_call_service/);

    await ask(paired, "h-light", [lightOn]);
    expect(toolResults(rig.h, "h-light")).toEqual([
      expect.stringMatching(/^error: there is no tool named 'ha_call_service'/),
    ]);
    expect(stateOf("light.kitchen")).toBe("off");
    expect(home.calls).toEqual([]);
  }, 60_000);

  it("the owner's turn has the ha tools and turns the light on", async () => {
    await ask(owner, "h-owner", [lightOn]);
    expect(toolsOf("h-owner").tools).toContain("ha_call_service");
    expect(toolResults(rig.h, "h-owner")).toEqual([expect.stringContaining("light.kitchen is now on")]);
    expect(stateOf("light.kitchen")).toBe("on");
  }, 60_000);
});
