/**
 * The command registry's rules on who sees and runs what, and the platform menus built from it.
 */
import { describe, expect, it } from "vitest";
import { discordCommandBodies } from "../../adapters/discord/commands.js";
import { telegramMenu } from "../../adapters/telegram/commands.js";
import type { CommandContext } from "../../core/commands.js";
import { CommandRegistry } from "../../gateway/commands.js";

const ctx = (isOwner: boolean): CommandContext => ({
  message: {
    platform: "telegram",
    messageId: "1",
    chat: { platform: "telegram", chatId: "5" },
    chatType: "dm",
    sender: { id: "5" },
    text: "",
    mentioned: false,
  },
  args: "",
  sessionKey: "telegram:dm:5",
  now: 0,
  isOwner,
});

function registry(): CommandRegistry {
  const r = new CommandRegistry();
  r.register("help", { description: "list commands", run: () => "help" });
  r.register("reset", { description: "same as /new", hidden: true, run: () => "reset" });
  r.register("usage-all", { description: "everyone's usage", access: "owner", run: () => "all of it" });
  r.register("my-skill", { description: "a hyphenated command", run: () => "skill ran" });
  return r;
}

describe("command registry", () => {
  it("hides owner-only commands from others' /help and refuses them; owners see and run them", () => {
    const r = registry();
    expect(r.helpText({ isOwner: false })).not.toContain("/usage-all");
    expect(r.helpText({ isOwner: false })).not.toContain("/reset");
    expect(r.helpText({ isOwner: true })).toContain("/usage-all — everyone's usage");
    expect(r.resolve("usage-all", ctx(false))).toBe("/usage-all is for the owner only.");
    expect(r.resolve("usage-all", ctx(true))).toBe("all of it");
  });

  it("menus carry what everyone may run, not hidden or owner-only commands", () => {
    expect(registry().menu()).toEqual([
      { name: "help", description: "list commands" },
      { name: "my-skill", description: "a hyphenated command" },
    ]);
  });

  it("finds a hyphenated command by Telegram's underscore name", () => {
    expect(registry().resolve("my_skill", ctx(false))).toBe("skill ran");
  });

  it("maps names for Telegram (underscores, ≤ 32 chars) and drops what it cannot show", () => {
    const long = "d".repeat(300);
    expect(
      telegramMenu([
        { name: "my-skill", description: "x" },
        { name: "Help", description: long },
        { name: "a".repeat(33), description: "too long a name" },
        { name: "ünïcode", description: "not allowed" },
        { name: "blank", description: "  " },
      ]),
    ).toEqual([
      { command: "my_skill", description: "x" },
      { command: "help", description: `${"d".repeat(255)}…` },
      { command: "blank", description: "blank" },
    ]);
  });

  it("builds Discord bodies with a text option and descriptions within 100 characters", () => {
    const [body] = discordCommandBodies([{ name: "resume", description: "r".repeat(150) }]);
    expect(body).toMatchObject({ name: "resume", type: 1 });
    expect(String(body?.["description"])).toHaveLength(100);
    expect(body?.["options"]).toEqual([
      { type: 3, name: "text", description: "what follows the command", required: false },
    ]);
  });
});
