/**
 * DingTalk through the whole gateway: the fake DingTalk (stream gateway, WebSocket, OpenAPI) with the
 * real adapter (`dingtalk-stream`'s DWClient inside) configured by env, the real runner and the scripted
 * model.
 */
import { describe, expect, it, vi } from "vitest";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  type FakeDingtalk,
  robotMessage,
  startFakeDingtalk,
  TOPIC_CARD,
  TOPIC_ROBOT,
} from "../fakes/dingtalk/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN = "ann0001";
const BOB = "bob0002";
const STRANGER = "stranger9";
const TEAM = "cidTeamGroup01==";

const { running, start } = gatewayPlatform<FakeDingtalk>({
  startFake: startFakeDingtalk,
  prepare: (fake) => {
    for (const u of [ANN, BOB, STRANGER]) fake.addUser(u);
    fake.addGroup(TEAM);
  },
  env: (fake) => ({
    DINGTALK_CLIENT_ID: CLIENT_ID,
    DINGTALK_CLIENT_SECRET: CLIENT_SECRET,
    DINGTALK_API_URL: fake.url,
    DINGTALK_ALLOWED_USERS: `${ANN},${BOB}`,
  }),
  connect: (fake) => vi.waitFor(() => expect(fake.openSockets).toBe(1)),
});

const replies = (fake: FakeDingtalk, to: string, count: number): Promise<string[]> =>
  atLeast(() => fake.textsTo(to), count);

describe("dingtalk through the gateway", () => {
  it("answers a DM and a group mention, acknowledging each callback; reports running", async () => {
    const { fake, h } = await start();
    const dm = fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "Hello there" }));
    expect(await replies(fake, ANN, 1)).toEqual(["echo: Hello there"]);
    expect(fake.acked.has(dm)).toBe(true);
    expect(fake.sent[0]).toMatchObject({ path: "robot/oToMessages/batchSend" });

    fake.callback(TOPIC_ROBOT, robotMessage({ from: BOB, group: TEAM, text: "what's the time?" }));
    expect(await replies(fake, TEAM, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.sent.at(-1)).toMatchObject({ path: "robot/groupMessages/send" });
    expect(fake.tokensIssued).toBe(1);
    const health = await gatewayHealth(h);
    expect(health.adapters["dingtalk"]?.state).toBe("running");
  });

  it("a file sent in reaches the model through messageFiles/download", async () => {
    const { fake, h } = await start();
    fake.addFile("dlcode-list", Buffer.from("Shopping list: apples, pears"), "text/plain");
    fake.callback(
      TOPIC_ROBOT,
      robotMessage({
        from: ANN,
        msgtype: "file",
        content: { downloadCode: "dlcode-list", fileName: "list.txt" },
      }),
    );
    await replies(fake, ANN, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(
      fake.calls.some(
        (c) => c.path === "robot/messageFiles/download" && c.body["downloadCode"] === "dlcode-list",
      ),
    ).toBe(true);
  });

  it("an approval card's button click reaches the runner as the clicker's /approve; the card is marked", async () => {
    const { fake, h } = await start({ HERALD_EXEC_BACKEND: "local", HERALD_EXEC_GROUPS: "true" });
    h.llm.setDefault((req: FakeLlmRequest) => {
      const last = req.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return {
        toolCalls: [
          { name: "terminal", arguments: { command: "chattr -i nothing 2>/dev/null; echo approved-run" } },
        ],
      };
    });
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "tidy" }));
    await vi.waitFor(() => expect(fake.sent.some((s) => s.path.includes("interactiveCards"))).toBe(true), {
      timeout: 15_000,
    });
    const card = fake.sent.find((s) => s.path.includes("interactiveCards"))!;
    const data = fake.cards.get(card.id)!;
    const actions = (
      data["contents"] as {
        type: string;
        actions?: { id: string; label: { text: string }; params: object }[];
      }[]
    ).find((c) => c.type === "action")!.actions!;
    const approve = actions.find((a) => a.label.text.includes("Approve"))!;
    const click = {
      outTrackId: card.id,
      userId: ANN,
      corpId: "dingcorp01",
      value: JSON.stringify({ cardPrivateData: { actionIds: [approve.id], params: approve.params } }),
    };
    const ackId = fake.callback(TOPIC_CARD, click);
    await vi.waitFor(() => expect(fake.textsTo(ANN).at(-1)).toMatch(/tool said:[\s\S]*approved-run/), {
      timeout: 15_000,
    });
    expect(fake.acked.has(ackId)).toBe(true);
    await vi.waitFor(() => expect(JSON.stringify(fake.cards.get(card.id))).toContain("✓ ✅ Approve"));
    expect(JSON.stringify(fake.cards.get(card.id))).not.toContain('"type":"action"');
    // The same click redelivered is the same message: nothing runs again.
    fake.callback(TOPIC_CARD, click);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });

  it("a send throttled with 429 is sent once after the wait it names; an expired token is fetched again", async () => {
    const { fake, h } = await start();
    fake.fault("robot/oToMessages/batchSend", {
      status: 429,
      body: { code: "Throttling", message: "too many" },
      headers: { "retry-after": "1" },
    });
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "busy?" }));
    expect(await replies(fake, ANN, 1)).toEqual(["echo: busy?"]);
    expect(fake.calls.filter((c) => c.path === "robot/oToMessages/batchSend")).toHaveLength(2);

    fake.expireTokens();
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "still there?" }));
    expect(await replies(fake, ANN, 2)).toEqual(["echo: busy?", "echo: still there?"]);
    expect(fake.tokensIssued).toBe(2);
    await h.gateway.runner.outbox.idle();
  });

  it("logs and acknowledges malformed callbacks without losing the connection; the next message is answered", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const notJson = fake.callback(TOPIC_ROBOT, "{not json");
    const noFields = fake.callback(TOPIC_ROBOT, { msgId: "m1" });
    const badCard = fake.callback(TOPIC_CARD, { outTrackId: "x", userId: ANN, value: "{oops" });
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "the real one" }));
    expect(await replies(fake, ANN, 1)).toEqual(["echo: the real one"]);
    for (const id of [notJson, noFields, badCard]) expect(fake.acked.has(id)).toBe(true);
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("dingtalk callback malformed; skipped");
    expect(log).not.toContain(CLIENT_SECRET);
    expect(fake.connections).toBe(1);
  });

  it("reconnects after a dropped socket; a redelivered message after a restart is answered once; a stranger gets a pairing code", async () => {
    const { fake, h } = await start();
    const first = robotMessage({ from: ANN, text: "first", msgId: "msgFirst01" });
    fake.callback(TOPIC_ROBOT, first);
    await replies(fake, ANN, 1);
    fake.dropSockets();
    await vi.waitFor(() => expect(fake.connections).toBe(2), { timeout: 10_000 });
    await vi.waitFor(() => expect(fake.openSockets).toBe(1));
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "second" }));
    expect(await replies(fake, ANN, 2)).toEqual(["echo: first", "echo: second"]);

    await h.restart();
    await vi.waitFor(() => expect(fake.openSockets).toBe(1), { timeout: 10_000 });
    fake.callback(TOPIC_ROBOT, first);
    fake.callback(TOPIC_ROBOT, robotMessage({ from: ANN, text: "third" }));
    expect(await replies(fake, ANN, 3)).toEqual(["echo: first", "echo: second", "echo: third"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(3);

    fake.callback(TOPIC_ROBOT, robotMessage({ from: STRANGER, text: "hi" }));
    expect((await replies(fake, STRANGER, 1))[0]).toMatch(/pairing code/);
    expect(h.llm.requests).toHaveLength(3);
  });

  it("a refused Client Secret fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeDingtalk());
    const h = await running.startHarness({
      env: {
        DINGTALK_CLIENT_ID: CLIENT_ID,
        DINGTALK_CLIENT_SECRET: "wrong-secret-4711",
        DINGTALK_API_URL: fake.url,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["dingtalk"]?.state).toBe("failed");
    expect(health.adapters["dingtalk"]?.detail).toMatch(/DINGTALK_CLIENT_SECRET/);
    expect(health.adapters["dingtalk"]?.detail).not.toContain("wrong-secret-4711");
    expect(fake.openSockets).toBe(0);
  });
});
