/**
 * Buttons on Slack, through the whole gateway (fake Slack Web API and Socket Mode, the real bolt
 * adapter, runner, agent loop, terminal tool): an approval prompt carries an actions block; a click
 * (a signed `block_actions` POST, or an `interactive` envelope in Socket Mode) is acknowledged, reaches
 * the runner as the clicker's `/approve`, runs the command once and marks the prompt.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import {
  blockActionsPayload,
  eventCallback,
  type FakeSlack,
  type FakeSlackMessage,
  messageEvent,
  signedInteraction,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { SIGNING_SECRET } from "./slack-helpers.js";

const running = platformPerTest<FakeSlack>();

// `chattr` is on the rule table; the proof file counts the runs (host backend: no bubblewrap needed).
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";

function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(await startFakeSlack());
  const h = await running.startHarness({
    env: {
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      SLACK_ALLOWED_USERS: "U0ALICE01,U0BOB0001",
      HERALD_EXEC_BACKEND: "local",
      HERALD_EXEC_GROUPS: "true",
      ...env,
    },
  });
  h.llm.setDefault(wantsCommand);
  return { fake, h };
}

async function post(request: Request): Promise<void> {
  const res = await fetch(request);
  expect(res.status).toBe(200);
}

const url = (h: Harness) => `${h.apiUrl}/webhooks/slack/events`;
const buttonLabels = (m: FakeSlackMessage) =>
  m.blocks
    .filter((b) => b["type"] === "actions")
    .flatMap((b) => (b["elements"] as { text: { text: string } }[]).map((e) => e.text.text));

async function prompt(fake: FakeSlack): Promise<FakeSlackMessage> {
  await vi.waitFor(() => expect(fake.messages.some((m) => buttonLabels(m).length > 0)).toBe(true), {
    timeout: 15_000,
  });
  return fake.messages.find((m) => buttonLabels(m).length > 0)!;
}

const lastText = (fake: FakeSlack) => fake.messages.at(-1)?.text ?? "";

describe("buttons on Slack", () => {
  it("a click (HTTP interactivity) reaches the runner as /approve: it runs once, the prompt is marked", async () => {
    const { fake, h } = await start();
    await post(
      signedRequest(
        eventCallback(messageEvent({ channel: "D0ALICE01", ts: "1700000001.000100", text: "tidy" })),
        {
          secret: SIGNING_SECRET,
          url: url(h),
        },
      ),
    );
    const asked = await prompt(fake);
    expect(asked.text).toContain("needs your approval");
    expect(buttonLabels(asked)).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);
    const payload = blockActionsPayload(structuredClone(asked), "✅ Approve");

    await post(signedInteraction(payload, { secret: SIGNING_SECRET, url: url(h) }));
    await vi.waitFor(() => expect(lastText(fake)).toMatch(/tool said:[\s\S]*approved-run/), {
      timeout: 15_000,
    });
    expect(lastText(fake).match(/approved-run/g)).toHaveLength(1);
    await vi.waitFor(() => expect(asked.text).toMatch(/✓ ✅ Approve$/));
    expect(asked.blocks).toEqual([]);

    // The same payload again (Slack redelivers when an ack was lost) is the same message: nothing more.
    await post(signedInteraction(payload, { secret: SIGNING_SECRET, url: url(h) }));
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });

  it("a prompt answered by typing /deny runs nothing and loses its buttons", async () => {
    const { fake, h } = await start();
    const say = async (ts: string, text: string) =>
      post(
        signedRequest(eventCallback(messageEvent({ channel: "D0ALICE01", ts, text })), {
          secret: SIGNING_SECRET,
          url: url(h),
        }),
      );
    await say("1700000001.000100", "tidy");
    const asked = await prompt(fake);
    await say("1700000002.000100", "/deny");
    await vi.waitFor(() => expect(asked.text).toMatch(/✗ Denied$/), { timeout: 15_000 });
    expect(asked.blocks).toEqual([]);
    // Nothing ran: the model was told in the held call's own result, and the reply shows no run.
    await vi.waitFor(() => {
      const results = h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool");
      expect(results.map((r) => messageText(r.messages.at(-1)))).toEqual([
        "not run: the user denied it. Do not run it another way; say what you will do instead.",
      ]);
    });
    await vi.waitFor(() => expect(lastText(fake)).toMatch(/^tool said: not run/));
    // `cat proof.txt` would print the line on its own; the prompt and progress only quote the command.
    expect(fake.messages.filter((m) => /^approved-run$/m.test(m.text))).toEqual([]);
  });

  it("an unsigned click is refused", async () => {
    const { fake, h } = await start();
    await post(
      signedRequest(
        eventCallback(messageEvent({ channel: "D0ALICE01", ts: "1700000001.000100", text: "tidy" })),
        {
          secret: SIGNING_SECRET,
          url: url(h),
        },
      ),
    );
    const asked = await prompt(fake);
    const forged = signedInteraction(blockActionsPayload(asked, "✅ Approve"), {
      secret: "wrong",
      url: url(h),
    });
    expect((await fetch(forged)).status).toBe(401);
    expect(h.llm.requests.some((r) => r.messages.at(-1)?.role === "tool")).toBe(false);
  });

  it("Socket Mode: an interactive envelope is acked and the click runs the command; another user's click is refused", async () => {
    const { fake, h } = await start({ SLACK_APP_TOKEN: "xapp-1-A0001-3333-fakeapptoken" });
    await fake.waitForConnections(1);
    const mention = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000200.000002",
      text: "<@UHERALD01> tidy",
    });
    await fake.pushEvent(eventCallback(mention)).acked;
    const asked = await prompt(fake);
    expect(asked.threadTs).toBe("1700000200.000002");

    const bob = fake.pushEvent(blockActionsPayload(structuredClone(asked), "✅ Approve", "U0BOB0001"), {
      type: "interactive",
    });
    await bob.acked;
    await vi.waitFor(
      () => expect(lastText(fake)).toBe("Only the person who asked can answer this request."),
      {
        timeout: 10_000,
      },
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(buttonLabels(asked)).toHaveLength(3);
    expect(h.llm.requests.some((r) => r.messages.at(-1)?.role === "tool")).toBe(false);

    await fake.pushEvent(blockActionsPayload(structuredClone(asked), "✅ Approve"), { type: "interactive" })
      .acked;
    await vi.waitFor(() => expect(lastText(fake)).toMatch(/tool said:[\s\S]*approved-run/), {
      timeout: 15_000,
    });
    await vi.waitFor(() => expect(asked.blocks).toEqual([]));
  });
});
