/**
 * Home Assistant both ways, through the whole gateway with the scripted model: the `ha` toolset
 * against the fake Home Assistant (a light turned on; a lock held for approval and unlocked only after
 * `/approve`; a refused token reported to the model with its fix), and the conversation webhook (a
 * text in, speech out, the conversation kept as the session; a wrong secret refused and logged; a
 * user nobody allowed gets a pairing code and no turn; a reply that comes late arrives as a notification).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { type FakeHomeAssistant, HA_TOKEN, startFakeHomeAssistant } from "../fakes/homeassistant/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

const SECRET = "ha-webhook-secret-0123456789";

let harness: Harness | undefined;
let fake: FakeHomeAssistant | undefined;
afterEach(async () => {
  await harness?.stop();
  await fake?.close();
  harness = undefined;
  fake = undefined;
});

async function start(env: Record<string, string> = {}, logs?: string[]): Promise<Harness> {
  fake = await startFakeHomeAssistant();
  harness = await startHarness({
    env: {
      HOMEASSISTANT_URL: fake.url,
      HOMEASSISTANT_TOKEN: HA_TOKEN,
      HOMEASSISTANT_WEBHOOK_SECRET: SECRET,
      HOMEASSISTANT_ALLOWED_USERS: "homeassistant,ha-user-anna",
      ...env,
    },
    ...(logs
      ? { logger: createLogger({ level: "info", destination: { write: (l: string) => logs.push(l) } }) }
      : {}),
  });
  return harness;
}

interface Spoken {
  status: number;
  body: { speech?: string; output?: string; conversation_id?: string; error?: string };
}

async function say(
  h: Harness,
  body: Record<string, unknown>,
  auth: { bearer?: string; path?: string } = { bearer: SECRET },
): Promise<Spoken> {
  const res = await fetch(`${h.apiUrl}/webhooks/homeassistant${auth.path ? `/${auth.path}` : ""}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(auth.bearer ? { authorization: `Bearer ${auth.bearer}` } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Spoken["body"] };
}

const stateOf = (id: string) => fake?.entities.find((e) => e.entity_id === id)?.state;

/** A model that does what the last user message asks with one call, then reports the result. */
function homeModel(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `**Done**: ${messageText(last).split("\n").at(-1)}` };
  const text = messageText(last);
  if (text.includes("kitchen light"))
    return {
      toolCalls: [
        {
          name: "ha_call_service",
          arguments: { domain: "light", service: "turn_on", entity_id: "light.kitchen" },
        },
      ],
    };
  if (text.includes("front door"))
    return {
      toolCalls: [
        {
          name: "ha_call_service",
          arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
        },
      ],
    };
  if (text.includes("what is on"))
    return { toolCalls: [{ name: "ha_list_entities", arguments: { domain: "light" } }] };
  return { text: `You said: ${text}` };
}

describe("Home Assistant through the gateway", () => {
  it("conversation webhook: a text in, speech out; the conversation is the session", async () => {
    const h = await start();
    h.llm.setDefault(homeModel);
    const first = await say(h, { text: "hello there", conversation_id: "01JCONV0001", language: "en" });
    expect(first).toEqual({
      status: 200,
      body: {
        speech: "You said: hello there",
        output: "You said: hello there",
        conversation_id: "01JCONV0001",
      },
    });
    await say(h, { text: "and again", conversation_id: "01JCONV0001" });
    // The second request of the conversation carried the first exchange.
    const history = h.llm.requests.at(-1)!.messages.map((m) => messageText(m));
    expect(history).toEqual(expect.arrayContaining(["hello there", "You said: hello there", "and again"]));
    // The Webhook Conversation integration's shape, its secret in the path; a new conversation is made.
    const other = await say(h, { query: "from the integration", user_id: "ha-user-anna" }, { path: SECRET });
    expect(other.body.output).toBe("You said: from the integration");
    expect(other.body.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses a wrong secret (logged, nothing run) and gives users nobody allowed no turn", async () => {
    const logs: string[] = [];
    const h = await start({}, logs);
    h.llm.setDefault(homeModel);
    const wrong = await say(h, { text: "turn on the kitchen light" }, { bearer: "not-the-secret-at-all" });
    expect(wrong.status).toBe(401);
    expect((await say(h, { text: "hi" }, { path: "guess" })).status).toBe(401);
    expect((await say(h, { text: "hi" }, {})).status).toBe(401);
    const refusals = logs.filter((l) => l.includes("home assistant request refused"));
    expect(refusals).toHaveLength(3);
    expect(logs.join("")).not.toContain("not-the-secret-at-all");
    // A user nobody allowed hears a pairing code (the owner approves it), as in any direct chat.
    const stranger = await say(h, { text: "turn on the kitchen light", user_id: "ha-user-mallory" });
    expect(stranger.status).toBe(200);
    expect(stranger.body.speech).toMatch(/Your pairing code is [A-Z0-9]+ .*herald pairing approve/s);
    expect(h.llm.requests).toHaveLength(0);
    expect(stateOf("light.kitchen")).toBe("off");
    expect((await say(h, { conversation_id: "x" })).status).toBe(400);
  });

  it("turns a light on when asked through Assist", async () => {
    const h = await start();
    h.llm.setDefault(homeModel);
    const reply = await say(h, { text: "turn on the kitchen light", conversation_id: "01JCONV0002" });
    expect(reply.body.speech).toBe("Done: light.kitchen is now on");
    expect(stateOf("light.kitchen")).toBe("on");
    expect(fake!.calls).toEqual([expect.objectContaining({ domain: "light", service: "turn_on" })]);
  });

  it("holds an unlock for approval; /approve runs it once", async () => {
    const h = await start();
    h.llm.setDefault(homeModel);
    const asked = await say(h, { text: "open the front door", conversation_id: "01JCONV0003" });
    expect(asked.body.speech).toContain("needs your approval");
    expect(asked.body.speech).toContain("lock.unlock");
    expect(asked.body.speech).toContain("/approve");
    expect(stateOf("lock.front_door")).toBe("locked");
    expect(fake!.calls).toEqual([]);

    const ran = await say(h, { text: "/approve", conversation_id: "01JCONV0003" });
    expect(ran.body.speech).toBe("Done: lock.front_door is now unlocked");
    expect(stateOf("lock.front_door")).toBe("unlocked");
    expect(fake!.calls).toHaveLength(1);
    expect((await say(h, { text: "/approve", conversation_id: "01JCONV0003" })).body.speech).toBe(
      "Nothing is waiting for your approval.",
    );
    expect(fake!.calls).toHaveLength(1);
  });

  it("a refused token reaches the model as an error naming the fix", async () => {
    const h = await start({ HOMEASSISTANT_TOKEN: "revoked-token" });
    h.llm.setDefault(homeModel);
    const reply = await chat(h, "what is on?", { sessionId: "ha-bad-token" });
    expect(reply.status).toBe(200);
    const result = h.llm.requests.at(-1)!.messages.at(-1)!;
    expect(result.role).toBe("tool");
    expect(messageText(result)).toMatch(/refused the access token \(auth_invalid\).*HOMEASSISTANT_TOKEN/);
    expect(fake!.authAttempts).toContain("revoked-token");
  });

  it("a reply later than the wait arrives as a notification", async () => {
    const h = await start({ HOMEASSISTANT_REPLY_TIMEOUT_MS: "300" });
    h.llm.script({ text: "Here is the slow answer.", delayMs: 1500 });
    const early = await say(h, { text: "think hard", conversation_id: "01JCONV0004" });
    expect(early.body.speech).toBe("This is taking a while. I'll send the answer as a notification.");
    await expect
      .poll(() => fake!.notifications.map((n) => n.message), { timeout: 10_000 })
      .toEqual(["Here is the slow answer."]);
  });
});
