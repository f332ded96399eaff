/**
 * Mattermost pieces without a server: the config section (env names, errors naming the key), how a
 * `posted` event reads (mentions, threads, what is ignored) and the post-length split.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MATTERMOST_MAX_CHARS, mattermostChunks } from "../../adapters/mattermost/format.js";
import { MalformedEventError, parsePosted } from "../../adapters/mattermost/parse.js";
import { configuredPlatforms, loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";

const ME = { id: "herald0000000000000000000a", username: "herald" };
const ANN = "ann00000000000000000000000";
const CHANNEL = "town0000000000000000000000";

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});
const load = (env: Record<string, string>) => {
  home = mkdtempSync(join(tmpdir(), "herald-mm-config-"));
  return loadConfig({ env: { HERALD_HOME: home, ...env } });
};
const configError = (env: Record<string, string>): ConfigError => {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
};

const posted = (post: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  channel_type: "O",
  sender_name: "@ann",
  post: JSON.stringify({ id: "post00000000000000000000aa", channel_id: CHANNEL, user_id: ANN, ...post }),
  ...extra,
});

describe("mattermost config", () => {
  it("MATTERMOST_URL and MATTERMOST_TOKEN configure the platform", () => {
    const config = load({
      MATTERMOST_URL: "https://chat.example.com",
      MATTERMOST_TOKEN: "tok",
      MATTERMOST_ALLOWED_USERS: ANN,
    });
    expect(configuredPlatforms(config).map((m) => m.name)).toContain("mattermost");
    expect(config.platforms["mattermost"]).toMatchObject({ allowedUsers: [ANN], requireMention: true });
  });

  it("one without the other is an error naming the missing key", () => {
    expect(configError({ MATTERMOST_URL: "https://chat.example.com" }).key).toBe("MATTERMOST_TOKEN");
    expect(configError({ MATTERMOST_TOKEN: "tok" }).key).toBe("MATTERMOST_URL");
  });

  it("an address that is not a URL is an error naming MATTERMOST_URL", () => {
    const err = configError({ MATTERMOST_URL: "chat.example.com", MATTERMOST_TOKEN: "tok" });
    expect(err.message).toContain("MATTERMOST_URL");
  });
});

describe("mattermost posted events", () => {
  it("a DM is addressed and has no thread unless written in one", () => {
    const dm = parsePosted(posted({ message: "hi" }, { channel_type: "D" }), ME)!.message;
    expect(dm).toMatchObject({
      chatType: "dm",
      mentioned: true,
      text: "hi",
      sender: { id: ANN, name: "ann" },
    });
    expect(dm.chat).toEqual({ platform: "mattermost", chatId: CHANNEL });
    const inThread = parsePosted(
      posted({ message: "more", root_id: "root0000000000000000000000" }, { channel_type: "D" }),
      ME,
    )!;
    expect(inThread.message.chat.threadId).toBe("root0000000000000000000000");
  });

  it("in a channel, @username addresses the bot (any case, with punctuation), a longer name does not", () => {
    const read = (message: string) => parsePosted(posted({ message }), ME)!.message;
    expect(read("@herald what time is it?")).toMatchObject({ mentioned: true, text: "what time is it?" });
    expect(read("thanks @Herald, great")).toMatchObject({ mentioned: true, text: "thanks, great" });
    expect(read("ask @heraldry about it").mentioned).toBe(false);
    expect(read("mail herald@example.com").mentioned).toBe(false);
    // The server's own mention list counts too.
    expect(
      parsePosted(posted({ message: "hey you" }, { mentions: JSON.stringify([ME.id]) }), ME)!.message
        .mentioned,
    ).toBe(true);
  });

  it("a channel post is its own thread; a reply belongs to its root's thread", () => {
    const top = parsePosted(posted({ message: "@herald q" }), ME)!.message;
    expect(top.chat.threadId).toBe("post00000000000000000000aa");
    const reply = parsePosted(posted({ message: "q2", root_id: "root0000000000000000000000" }), ME)!.message;
    expect(reply.chat.threadId).toBe("root0000000000000000000000");
  });

  it("ignores the bot's own posts, system posts and empty posts; keeps a post with only a file", () => {
    expect(parsePosted(posted({ message: "echo", user_id: ME.id }), ME)).toBeUndefined();
    expect(parsePosted(posted({ message: "ann joined", type: "system_join_channel" }), ME)).toBeUndefined();
    expect(parsePosted(posted({ message: "  " }), ME)).toBeUndefined();
    expect(parsePosted(posted({ message: "", file_ids: ["file0000000000000000000000"] }), ME)).toBeDefined();
  });

  it("a post that is not JSON or lacks its ids is a MalformedEventError", () => {
    expect(() => parsePosted({ channel_type: "O", post: "{nope" }, ME)).toThrow(MalformedEventError);
    expect(() => parsePosted({ channel_type: "O", post: JSON.stringify({ id: "x" }) }, ME)).toThrow(
      MalformedEventError,
    );
    expect(() => parsePosted({ channel_type: "O" }, ME)).toThrow(MalformedEventError);
  });
});

describe("mattermost replies", () => {
  it("split at the post limit, keeping every word", () => {
    const words = Array.from({ length: 9000 }, (_, i) => `w${i}`);
    const chunks = mattermostChunks(words.join(" "));
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(MATTERMOST_MAX_CHARS);
    expect(chunks.join(" ").split(/\s+/)).toEqual(words);
  });
});
