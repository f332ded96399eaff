/**
 * Buttons on Discord, through the whole gateway (fake Discord REST + gateway, the real discord.js
 * adapter, runner, agent loop, terminal tool): an approval prompt carries components; a click is
 * acknowledged, reaches the runner as the clicker's `/approve`, runs the command once and marks the
 * prompt; another user's click in a server is refused.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { platformPerTest } from "../helpers/per-test.js";

const running = platformPerTest<FakeDiscord>();

// `chattr` is on the rule table; the proof file counts the runs (host backend: no bubblewrap needed).
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";

function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

async function start() {
  const fake = running.trackFake(await startFakeDiscord());
  const h = await running.startHarness({
    env: {
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.url,
      DISCORD_ALLOWED_USERS: `${IDS.alice},${IDS.bob}`,
      HERALD_EXEC_BACKEND: "local",
      HERALD_EXEC_GROUPS: "true",
    },
  });
  await fake.gateway.waitLive();
  h.llm.setDefault(wantsCommand);
  return { fake, h };
}

const labels = (components: unknown[]) =>
  (components as { components: { label: string }[] }[]).flatMap((row) => row.components.map((b) => b.label));

async function prompt(fake: FakeDiscord, channelId: string) {
  await vi.waitFor(
    () => expect(fake.botMessages(channelId).some((m) => m.components.length > 0)).toBe(true),
    {
      timeout: 15_000,
    },
  );
  return fake.botMessages(channelId).find((m) => m.components.length > 0)!;
}

describe("buttons on Discord", () => {
  it("a click on Approve reaches the runner as /approve: the command runs once, the prompt is marked", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "tidy the attributes" });
    const asked = await prompt(fake, IDS.aliceDm);
    expect(asked.content).toContain("needs your approval");
    expect(labels(asked.components)).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);

    const click = fake.clickButton({ channelId: IDS.aliceDm, messageId: asked.id, label: "✅ Approve" });
    await vi.waitFor(
      () =>
        expect(fake.botMessages(IDS.aliceDm).at(-1)?.currentContent).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
    const ran = fake.botMessages(IDS.aliceDm).at(-1)!.currentContent;
    expect(ran.match(/approved-run/g)).toHaveLength(1);
    // Acknowledged as a deferred update; the prompt shows the choice and lost its buttons.
    expect(click.callbacks).toEqual([6]);
    await vi.waitFor(() => expect(asked.currentContent).toMatch(/✓ ✅ Approve$/));
    expect(asked.components).toEqual([]);
    // The runner saw the clicker's command.
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });

  it("a prompt answered by typing /approve runs the command once and loses its buttons", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "tidy the attributes" });
    const asked = await prompt(fake, IDS.aliceDm);
    fake.userSays({ channelId: IDS.aliceDm, content: "/approve" });
    await vi.waitFor(
      () =>
        expect(fake.botMessages(IDS.aliceDm).at(-1)?.currentContent).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
    await vi.waitFor(() => expect(asked.currentContent).toMatch(/✓ Approved$/), { timeout: 15_000 });
    expect(asked.components).toEqual([]);
    expect(h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool")).toHaveLength(1);
  });

  it("in a server another user's click is refused; the asker's runs it", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> tidy the attributes` });
    const asked = await prompt(fake, IDS.general);
    fake.clickButton({ channelId: IDS.general, messageId: asked.id, label: "✅ Approve", userId: IDS.bob });
    await vi.waitFor(
      () =>
        expect(fake.botMessages(IDS.general).at(-1)?.currentContent).toBe(
          "Only the person who asked can answer this request.",
        ),
      { timeout: 10_000 },
    );
    // Give a (wrong) edit of the prompt time to arrive: the asker must keep the buttons.
    await new Promise((r) => setTimeout(r, 300));
    expect(asked.components).not.toEqual([]);
    expect(asked.edits).toEqual([]);
    expect(h.llm.requests.some((r) => r.messages.at(-1)?.role === "tool")).toBe(false);

    fake.clickButton({ channelId: IDS.general, messageId: asked.id, label: "✅ Approve", userId: IDS.alice });
    await vi.waitFor(
      () =>
        expect(fake.botMessages(IDS.general).at(-1)?.currentContent).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
    await vi.waitFor(() => expect(asked.components).toEqual([]));
  });
});
