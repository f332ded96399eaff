/**
 * Microsoft Teams through the whole gateway: the fake Teams (OpenID keys, token endpoint, connector),
 * the real Bot Framework adapter configured by env as an operator would, activities POSTed to
 * `/webhooks/teams` signed as Bot Framework signs them, the real runner and the scripted model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import {
  APP_ID,
  APP_PASSWORD,
  type FakeTeams,
  type FakeTeamsActivity,
  startFakeTeams,
  type TeamsUser,
} from "../fakes/teams/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { atLeast, gatewayHealth, gatewayPlatform, userTexts } from "../helpers/gateway-platform.js";

const ANN: TeamsUser = {
  id: "29:1ann",
  name: "Ann Example",
  aadObjectId: "aaaaaaaa-0000-4000-8000-000000000001",
};
const BOB: TeamsUser = {
  id: "29:1bob",
  name: "Bob Example",
  aadObjectId: "bbbbbbbb-0000-4000-8000-000000000002",
};
const STRANGER: TeamsUser = {
  id: "29:1eve",
  name: "Eve",
  aadObjectId: "eeeeeeee-0000-4000-8000-000000000003",
};
const DM = "a:1dm-ann-herald";
const DM_STRANGER = "a:1dm-eve-herald";
const CHANNEL = "19:general0000@thread.tacv2";
const GROUP = "19:group-chat-0000@thread.v2";

const { running, start } = gatewayPlatform<FakeTeams>({
  startFake: startFakeTeams,
  env: (fake) => ({
    TEAMS_APP_ID: APP_ID,
    TEAMS_APP_PASSWORD: APP_PASSWORD,
    TEAMS_OPENID_METADATA_URL: fake.openIdMetadataUrl,
    TEAMS_LOGIN_URL: fake.loginUrl,
    TEAMS_SERVICE_URL: fake.serviceUrl,
    TEAMS_ALLOWED_USERS: `${ANN.aadObjectId},${BOB.aadObjectId}`,
  }),
});

const endpoint = (h: Harness) => `${h.apiUrl}/webhooks/teams`;

async function deliver(fake: FakeTeams, h: Harness, activity: object, expected = 200): Promise<void> {
  const res = await fetch(fake.signedRequest(endpoint(h), activity));
  expect(res.status).toBe(expected);
}

async function replies(
  fake: FakeTeams,
  conversation: string,
  count: number,
  thread?: string,
): Promise<string[]> {
  return (await atLeast(() => fake.botMessagesIn(conversation, thread), count)).map((a) => fake.shown(a));
}

describe("teams through the gateway", () => {
  it("answers a DM once, in the personal chat, and reports running in /health", async () => {
    const { fake, h } = await start();
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "Hello there" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: Hello there"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    expect(fake.botMessagesIn(DM)[0]!.conversationId).toBe(DM);
    const health = await gatewayHealth(h);
    expect(health.adapters["teams"]?.state).toBe("running");
  });

  it("in a channel ignores chatter, answers a mention in its reply chain, and keeps the chain as one session", async () => {
    const { fake, h } = await start();
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: ANN,
        conversationId: `${CHANNEL};messageid=1001`,
        id: "1001",
        conversationType: "channel",
        text: "lunch anyone?",
      }),
    );
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: ANN,
        conversationId: `${CHANNEL};messageid=1002`,
        id: "1002",
        conversationType: "channel",
        text: "what's the time?",
        mention: true,
      }),
    );
    expect(await replies(fake, CHANNEL, 1, "1002")).toEqual(["echo: what's the time?"]);

    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: ANN,
        conversationId: `${CHANNEL};messageid=1002`,
        id: "1003",
        conversationType: "channel",
        text: "and tomorrow?",
        mention: true,
      }),
    );
    expect(await replies(fake, CHANNEL, 2, "1002")).toEqual(["echo: what's the time?", "seen 2 questions"]);

    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: BOB,
        conversationId: `${CHANNEL};messageid=1004`,
        id: "1004",
        conversationType: "channel",
        text: "new topic",
        mention: true,
      }),
    );
    expect(await replies(fake, CHANNEL, 1, "1004")).toEqual(["seen 1 questions"]);
    await h.gateway.runner.outbox.idle();
    expect(JSON.stringify(userTexts(h))).not.toContain("lunch");
    expect(JSON.stringify(userTexts(h))).not.toContain("<at>");
    expect(h.llm.requests).toHaveLength(3);
  });

  it("in a group chat answers when mentioned only", async () => {
    const { fake, h } = await start();
    await deliver(
      fake,
      h,
      fake.userMessage({ from: BOB, conversationId: GROUP, conversationType: "groupChat", text: "just us" }),
    );
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: BOB,
        conversationId: GROUP,
        conversationType: "groupChat",
        text: "summarise please",
        mention: true,
      }),
    );
    expect(await replies(fake, GROUP, 1)).toEqual(["echo: summarise please"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(1);
  });

  it("shows a slow answer as it is written: one message updated in place, ending with the exact text", async () => {
    const { fake, h } = await start();
    const answer = "The tide comes in twice a day, pulled by the moon and, a little, by the sun.";
    h.llm.script({ text: answer, pieces: 10, chunkDelayMs: 400 });
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "tides?" }));
    await vi.waitFor(() => expect(fake.botMessagesIn(DM).map((a) => fake.shown(a))).toEqual([answer]), {
      timeout: 15_000,
    });
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    expect(fake.botMessagesIn(DM)[0]!.updates).toBeGreaterThanOrEqual(1);
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { fake, h } = await start();
    await deliver(fake, h, fake.userMessage({ from: STRANGER, conversationId: DM_STRANGER, text: "hi" }));
    expect((await replies(fake, DM_STRANGER, 1))[0]).toMatch(/pairing code/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("files in: a pasted file is fetched with the bot's token and a shared file from its download URL", async () => {
    const { fake, h } = await start();
    const pasted = fake.addFile(Buffer.from("Shopping list: apples, pears"), "text/plain");
    const shared = fake.addSharedFile(Buffer.from("Minutes: ship on Friday"), "text/plain");
    await deliver(
      fake,
      h,
      fake.userMessage({
        from: ANN,
        conversationId: DM,
        text: "what is in these?",
        attachments: [
          { contentType: "text/plain", contentUrl: pasted, name: "list.txt" },
          {
            contentType: "application/vnd.microsoft.teams.file.download.info",
            name: "minutes.txt",
            content: { downloadUrl: shared, fileType: "txt" },
          },
          // A URL elsewhere never gets the bot's token.
          { contentType: "image/png", contentUrl: "https://attacker.example/steal.png", name: "x.png" },
        ],
      }),
    );
    await replies(fake, DM, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(userTexts(h)[0]).toContain("Minutes: ship on Friday");
    expect(fake.calls.find((c) => c.path.startsWith("/v3/attachments/"))?.auth).toBe(true);
    // The pre-authorised URL gets no token, and the foreign one is not fetched at all.
    expect(fake.calls.find((c) => c.path.startsWith("/sharepoint/"))?.auth).toBe(false);
  });

  it("files out: an image goes inline as a data URL; another file is named in the text", async () => {
    const { fake, h } = await start();
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "hi" }));
    await replies(fake, DM, 1);
    const png = join(h.homeDir, "chart.png");
    const pdf = join(h.homeDir, "report.pdf");
    writeFileSync(png, Buffer.from("89504e470d0a1a0a", "hex"));
    writeFileSync(pdf, "%PDF-1.4");
    await h.gateway.adapters.get("teams")!.send(
      { platform: "teams", chatId: DM },
      {
        text: "Here they are",
        idempotencyKey: "files-out",
        files: [
          { path: png, mimeType: "image/png" },
          { path: pdf, mimeType: "application/pdf" },
        ],
      },
    );
    const out = fake.botMessagesIn(DM).at(-1)!;
    expect(out.text).toContain("Here they are");
    expect(out.text).toContain("report.pdf");
    expect(out.attachments).toEqual([
      { contentType: "image/png", contentUrl: "data:image/png;base64,iVBORw0KGgo=", name: "chart.png" },
    ]);
  });

  it("a reply refused with 429 is sent once, after the wait the connector named", async () => {
    const { fake, h } = await start({ TEAMS_STREAM: "off" });
    fake.fault(
      "POST activities",
      { status: 429, body: { error: { code: "TooManyRequests" } }, headers: { "Retry-After": "1" } },
      4,
    );
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "busy?" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: busy?"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(1);
    // The four 429s went to the reply's tries and the typing indicator's; each next try of the reply came
    // a Retry-After later (the connector client waits out three, the outbox the rest).
    const tries = fake.calls.filter(
      (c) => c.route === "POST activities" && (c.body as { type?: string }).type === "message",
    );
    expect(tries.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < tries.length; i++)
      expect(tries[i]!.at - tries[i - 1]!.at).toBeGreaterThanOrEqual(900);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("an unsigned, forged, expired or malformed request is refused and logged; the adapter runs on", async () => {
    const lines: string[] = [];
    const { fake, h } = await start({}, lines);
    const activity = fake.userMessage({ from: ANN, conversationId: DM, text: "forged" });
    for (const options of [
      { unsigned: true },
      { foreignKey: true },
      { expired: true },
      { audience: "someone-else" },
    ]) {
      expect((await fetch(fake.signedRequest(endpoint(h), activity, options))).status).toBe(401);
    }
    const garbage = await fetch(endpoint(h), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(garbage.status).toBe(400);
    const shapeless = await fetch(
      fake.signedRequest(endpoint(h), { type: "message", text: "no conversation" }),
    );
    expect(shapeless.status).toBe(400);
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "still here" }));
    expect(await replies(fake, DM, 1)).toEqual(["echo: still here"]);
    expect(h.llm.requests).toHaveLength(1);
    const log = lines.join("");
    expect(log).toContain("teams request refused: its token did not check out");
    expect(log).toContain("teams activity malformed; skipped");
    expect(log).not.toContain(APP_PASSWORD);
  });

  it("a redelivered activity is answered once; a crash mid-turn loses nothing; after a restart replies still go out", async () => {
    const { fake, h } = await start({ TEAMS_STREAM: "off" });
    const first = fake.userMessage({ from: ANN, conversationId: DM, text: "first" });
    await deliver(fake, h, first);
    await replies(fake, DM, 1);
    await deliver(fake, h, first);
    await h.gateway.runner.outbox.idle();

    h.llm.script({ text: "slow answer", delayMs: 1500 });
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "second" }));
    await vi.waitFor(() => expect(h.llm.requests.length).toBe(2));
    await h.crash();
    await h.start();
    expect(await replies(fake, DM, 2)).toEqual(["echo: first", "echo: second"]);

    await h.restart();
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "third" }));
    expect(await replies(fake, DM, 3)).toEqual(["echo: first", "echo: second", "echo: third"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessagesIn(DM)).toHaveLength(3);
  });

  it("a refused secret fails the platform with the fix, and the gateway runs on", async () => {
    const fake = running.trackFake(await startFakeTeams());
    const h = await running.startHarness({
      env: {
        TEAMS_APP_ID: APP_ID,
        TEAMS_APP_PASSWORD: "revoked-secret-4711",
        TEAMS_OPENID_METADATA_URL: fake.openIdMetadataUrl,
        TEAMS_LOGIN_URL: fake.loginUrl,
      },
    });
    const health = await gatewayHealth(h);
    expect(health.adapters["teams"]?.state).toBe("failed");
    expect(health.adapters["teams"]?.detail).toMatch(/TEAMS_APP_PASSWORD.*client secret/);
    expect(health.adapters["teams"]?.detail).not.toContain("revoked-secret-4711");
  });
});

// `chattr` is on the rule table; the proof file counts the runs.
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

describe("buttons on teams", () => {
  it("an approval is an Adaptive Card; a click runs the command once and marks the card", async () => {
    const { fake, h } = await start({ HERALD_EXEC_BACKEND: "local", TEAMS_STREAM: "off" });
    h.llm.setDefault(wantsCommand);
    await deliver(fake, h, fake.userMessage({ from: ANN, conversationId: DM, text: "tidy" }));
    let card: FakeTeamsActivity | undefined;
    await vi.waitFor(
      () => {
        card = fake.botMessagesIn(DM).find((a) => fake.buttons(a).length > 0);
        expect(card).toBeDefined();
      },
      { timeout: 15_000 },
    );
    expect(fake.shown(card!)).toContain("needs your approval");
    expect(fake.buttons(card!).map((b) => b.title)).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);

    const click = fake.click(card!, "✅ Approve", ANN);
    await deliver(fake, h, click);
    await vi.waitFor(
      () => expect(fake.shown(fake.botMessagesIn(DM).at(-1)!)).toMatch(/tool said:[\s\S]*approved-run/),
      {
        timeout: 15_000,
      },
    );
    expect(fake.shown(fake.botMessagesIn(DM).at(-1)!).match(/approved-run/g)).toHaveLength(1);
    await vi.waitFor(() => expect(fake.shown(card!)).toMatch(/✓ ✅ Approve$/));
    expect(fake.buttons(card!)).toEqual([]);
    // The same click delivered again (Teams retries) changes nothing.
    await deliver(fake, h, click);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });
});
