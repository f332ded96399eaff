/**
 * The platforms' command menus come from the gateway's registry: Telegram's `setMyCommands` at start,
 * Discord's application commands (bulk overwrite), and a Discord slash command with arguments runs as
 * the typed command would.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { startTelegramGateway } from "./telegram-helpers.js";

const telegram = platformPerTest<FakeTelegram>();
const discord = platformPerTest<FakeDiscord>();

describe("command menus", () => {
  it("Telegram: setMyCommands carries the registry's commands at start", async () => {
    const { fake, h } = await startTelegramGateway(telegram);
    await vi.waitFor(() => expect(fake.callsTo("setMyCommands")).toHaveLength(1));
    const raw = fake.callsTo("setMyCommands")[0]!.params["commands"];
    const sent = (typeof raw === "string" ? JSON.parse(raw) : raw) as {
      command: string;
      description: string;
    }[];
    const menu = h.gateway.runner.commands.menu();
    expect(sent.map((c) => c.command)).toEqual(menu.map((c) => c.name.replaceAll("-", "_")));
    expect(sent.map((c) => c.command)).toEqual(
      expect.arrayContaining([
        "new",
        "stop",
        "help",
        "retry",
        "undo",
        "compress",
        "title",
        "sessions",
        "resume",
      ]),
    );
    expect(sent.map((c) => c.command)).toEqual(expect.arrayContaining(["personality", "whoami"]));
    // Hidden commands stay out of the menu.
    expect(sent.map((c) => c.command)).not.toContain("reset");
    expect(sent.map((c) => c.command)).not.toContain("start");
    expect(sent.find((c) => c.command === "retry")?.description).toBe(
      "answer your last message again (the last answer is dropped)",
    );
  });

  it("Discord: registers the registry's commands natively; a slash command with text runs as typed", async () => {
    const fake = discord.trackFake(await startFakeDiscord());
    const h = await discord.startHarness({
      env: { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.url, DISCORD_ALLOWED_USERS: IDS.alice },
    });
    await fake.gateway.waitLive();
    const menu = h.gateway.runner.commands.menu().map((c) => c.name);
    await vi.waitFor(() => expect(fake.world.commands.map((c) => c["name"])).toEqual(menu));
    expect(fake.world.commands.find((c) => c["name"] === "resume")?.["options"]).toEqual([
      { type: 3, name: "text", description: "what follows the command", required: false },
    ]);

    fake.userSays({ channelId: IDS.aliceDm, content: "plan a trip to Lisbon" });
    await vi.waitFor(() => expect(fake.botMessages(IDS.aliceDm).length).toBe(1), { timeout: 10_000 });
    const titled = fake.runCommand(IDS.aliceDm, "title", IDS.alice, "Lisbon trip");
    await vi.waitFor(() => expect(titled.reply).toBe("🏷 Session titled “Lisbon trip”."));
    const listed = fake.runCommand(IDS.aliceDm, "sessions");
    await vi.waitFor(() => expect(listed.reply).toMatch(/^1\. Lisbon trip — .* — 2 messages \(current\)$/m));
    expect(titled.callbacks).toEqual([5]);
  });
});
