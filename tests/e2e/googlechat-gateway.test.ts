/**
 * Google Chat through the whole gateway: the fake Google Chat (Chat's certificates, the token endpoint,
 * the REST API), the real adapter configured by env as an operator would, events POSTed to
 * `/webhooks/googlechat` with a bearer token signed as Chat signs it, the real runner and the scripted
 * model.
 */
import { describe, expect, it, vi } from "vitest";
import {
  type ChatUser,
  type FakeChatMessage,
  type FakeGoogleChat,
  PROJECT_NUMBER,
  startFakeGoogleChat,
} from "../fakes/googlechat/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN: ChatUser = { name: "users/1001", displayName: "Ann Example" };
const BOB: ChatUser = { name: "users/1002", displayName: "Bob Example" };
const STRANGER: ChatUser = { name: "users/6666", displayName: "Eve" };
const DM = "spaces/DMann0001";
const DM_STRANGER = "spaces/DMeve0001";
const ROOM = "spaces/ROOMteam001";

const { start } = gatewayPlatform<FakeGoogleChat>({
  startFake: startFakeGoogleChat,
  env: (fake) => ({
    GOOGLE_CHAT_SERVICE_ACCOUNT: fake.serviceAccountPath,
    GOOGLE_CHAT_AUDIENCE: PROJECT_NUMBER,
    GOOGLE_CHAT_API_URL: fake.url,
    GOOGLE_CHAT_CERTS_URL: fake.certsUrl,
    GOOGLECHAT_ALLOWED_USERS: "1001,users/1002",
  }),
});

const endpoint = (h: Harness) => `${h.apiUrl}/webhooks/googlechat`;

async function deliver(fake: FakeGoogleChat, h: Harness, event: object): Promise<Response> {
  const res = await fetch(fake.signedRequest(endpoint(h), event));
  expect(res.status).toBe(200);
  return res;
}

async function replies(
  fake: FakeGoogleChat,
  space: string,
  count: number,
  thread?: string,
): Promise<string[]> {
  return (await atLeast(() => fake.botMessagesIn(space, thread), count)).map((m) => m.text);
}

describe("google chat through the gateway", () => {
  it("answers a DM once and reports running in /health", async () => {
    const { fake, h } = await start();
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "Hello there" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: Hello there"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    const health = await gatewayHealth(h);
    expect(health.adapters["googlechat"]?.state).toBe("running");
  });

  it("in a space answers a mention in its thread; the thread is one session, another thread another", async () => {
    const { fake, h } = await start();
    const thread = `${ROOM}/threads/T1`;
    await deliver(
      fake,
      h,
      fake.messageEvent({ from: ANN, space: ROOM, thread, text: "what's the time?", mention: true }),
    );
    expect(await replies(fake, ROOM, 1, thread)).toEqual(["echo: what's the time?"]);
    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    await deliver(
      fake,
      h,
      fake.messageEvent({ from: ANN, space: ROOM, thread, text: "and tomorrow?", mention: true }),
    );
    expect(await replies(fake, ROOM, 2, thread)).toEqual(["echo: what's the time?", "seen 2 questions"]);
    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    const other = `${ROOM}/threads/T2`;
    await deliver(
      fake,
      h,
      fake.messageEvent({ from: BOB, space: ROOM, thread: other, text: "new topic", mention: true }),
    );
    expect(await replies(fake, ROOM, 1, other)).toEqual(["seen 1 questions"]);
    expect(JSON.stringify(userTexts(h))).not.toContain("@Herald");
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { fake, h } = await start();
    await deliver(fake, h, fake.messageEvent({ from: STRANGER, space: DM_STRANGER, dm: true, text: "hi" }));
    expect((await replies(fake, DM_STRANGER, 1))[0]).toMatch(/pairing code/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("an uploaded file reaches the model through media.download", async () => {
    const { fake, h } = await start();
    const upload = fake.addUpload(DM, "list.txt", "text/plain", Buffer.from("Shopping list: apples, pears"));
    await deliver(
      fake,
      h,
      fake.messageEvent({ from: ANN, space: DM, dm: true, text: "what is in this?", attachment: [upload] }),
    );
    await replies(fake, DM, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.route === "GET media")).toBe(true);
  });

  it("shows a slow answer as it is written: one message patched in place, ending with the exact text", async () => {
    const { fake, h } = await start();
    const answer = "The tide comes in twice a day, pulled by the moon and, a little, by the sun.";
    h.llm.script({ text: answer, pieces: 10, chunkDelayMs: 400 });
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "tides?" }));
    await vi.waitFor(() => expect(fake.botMessagesIn(DM).map((m) => m.text)).toEqual([answer]), {
      timeout: 15_000,
    });
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    expect(fake.botMessagesIn(DM)[0]!.updates).toBeGreaterThanOrEqual(1);
  });

  it("a reply refused with 429 is sent once, after the wait it named", async () => {
    const { fake, h } = await start({ GOOGLE_CHAT_STREAM: "off" });
    fake.fault("POST messages", {
      status: 429,
      body: { error: { code: 429, status: "RESOURCE_EXHAUSTED" } },
      headers: { "Retry-After": "1" },
    });
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "busy?" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: busy?"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    const tries = fake.calls.filter((c) => c.route === "POST messages");
    expect(tries).toHaveLength(2);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it("an unsigned, forged, expired, misaddressed or malformed request is refused and logged; the adapter runs on", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const event = fake.messageEvent({ from: ANN, space: DM, dm: true, text: "forged" });
    for (const options of [
      { unsigned: true },
      { foreignKey: true },
      { expired: true },
      { audience: "999" },
    ]) {
      expect((await fetch(fake.signedRequest(endpoint(h), event, options))).status).toBe(401);
    }
    const garbage = fake.signedRequest(endpoint(h), {});
    const bad = await fetch(new Request(garbage, { body: "{not json" }));
    expect(bad.status).toBe(400);
    expect((await fetch(fake.signedRequest(endpoint(h), { type: "MESSAGE" }))).status).toBe(400);
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "still here" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: still here"]);
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("googlechat request refused: its token did not check out");
    expect(log).toContain("googlechat event malformed; skipped");
    expect(log).not.toContain("PRIVATE KEY");
  });

  it("a redelivered event is answered once; a crash mid-turn loses nothing; after a restart replies still go out", async () => {
    const { fake, h } = await start({ GOOGLE_CHAT_STREAM: "off" });
    const first = fake.messageEvent({ from: ANN, space: DM, dm: true, text: "first" });
    await deliver(fake, h, first);
    await replies(fake, DM, 1);
    await deliver(fake, h, first);
    await h.gateway.runner.outbox.idle();
    h.llm.script({ text: "slow answer", delayMs: 1500 });
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "second" }));
    await vi.waitFor(() => expect(h.llm.requests.length).toBe(2));
    await h.crash();
    await h.start();
    expect(await replies(fake, DM, 2)).toEqual(["echo: first", "echo: second"]);
    await h.restart();
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "third" }));
    expect(await replies(fake, DM, 3)).toEqual(["echo: first", "echo: second", "echo: third"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(3);
  });
});

// `chattr` is on the rule table; the proof file counts the runs.
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

describe("buttons on google chat", () => {
  it("an approval carries a card; a click runs the command once and the answer turns the card into the choice", async () => {
    const { fake, h } = await start({ HERALD_EXEC_BACKEND: "local", GOOGLE_CHAT_STREAM: "off" });
    h.llm.setDefault(wantsCommand);
    await deliver(fake, h, fake.messageEvent({ from: ANN, space: DM, dm: true, text: "tidy" }));
    let card: FakeChatMessage | undefined;
    await vi.waitFor(
      () => {
        card = fake.botMessagesIn(DM).find((m) => fake.buttons(m).length > 0);
        expect(card).toBeDefined();
      },
      { timeout: 15_000 },
    );
    expect(card!.text).toContain("needs your approval");
    expect(fake.buttons(card!).map((b) => b.text)).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);
    const click = fake.clickEvent(card!, "✅ Approve", ANN);
    const answer = (await (await deliver(fake, h, click)).json()) as {
      actionResponse?: { type: string };
      text?: string;
      cardsV2?: unknown[];
    };
    expect(answer.actionResponse?.type).toBe("UPDATE_MESSAGE");
    expect(answer.text).toMatch(/✓ ✅ Approve$/);
    expect(answer.cardsV2).toEqual([]);
    await vi.waitFor(
      () => expect(fake.botMessagesIn(DM).at(-1)!.text).toMatch(/tool said:[\s\S]*approved-run/),
      {
        timeout: 15_000,
      },
    );
    expect(
      fake
        .botMessagesIn(DM)
        .at(-1)!
        .text.match(/approved-run/g),
    ).toHaveLength(1);
    // The same click delivered again changes nothing.
    await deliver(fake, h, click);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });
});
