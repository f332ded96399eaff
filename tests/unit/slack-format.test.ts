import { describe, expect, it } from "vitest";
import { escapeMrkdwn, markdownToMrkdwn, renderChunks } from "../../adapters/slack/format.js";
import { decodeSlackText, parseSlackEvent } from "../../adapters/slack/parse.js";

const me = { botUserId: "UHERALD01", botId: "BHERALD01" };

describe("markdownToMrkdwn", () => {
  it("escapes Slack's control characters in text, code and links", () => {
    expect(escapeMrkdwn("a & <b> c")).toBe("a &amp; &lt;b&gt; c");
    expect(markdownToMrkdwn("<!channel> & <@U123>")).toBe("&lt;!channel&gt; &amp; &lt;@U123&gt;");
    expect(markdownToMrkdwn("`a<b`")).toBe("`a&lt;b`");
  });

  it("keeps link labels inside the link syntax and bare URLs as links", () => {
    expect(markdownToMrkdwn("[a|b > c](https://x.io/?q=1&r=2)")).toBe(
      "<https://x.io/?q=1&amp;r=2|a¦b &gt; c>",
    );
    expect(markdownToMrkdwn("see https://x.io now")).toBe("see <https://x.io> now");
    expect(markdownToMrkdwn("![chart](https://x.io/c.png)")).toBe("<https://x.io/c.png|chart>");
  });

  it("does not double-bold inside headings; task lists and rules render", () => {
    expect(markdownToMrkdwn("# The **big** one")).toBe("*The big one*");
    expect(markdownToMrkdwn("- [x] done\n- [ ] todo")).toBe("• ☑ done\n• ☐ todo");
    expect(markdownToMrkdwn("a\n\n---\n\nb")).toBe("a\n\n──────────\n\nb");
  });

  it("gives no chunks for empty text and one chunk for short text", () => {
    expect(renderChunks("")).toEqual([]);
    expect(renderChunks("  \n ")).toEqual([]);
    expect(renderChunks("**hi**")).toEqual(["*hi*"]);
  });

  it("measures chunks after rendering (escaping makes text longer)", () => {
    const text = "a & b < c ".repeat(1000);
    const chunks = renderChunks(text, 1000);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1000);
    expect(chunks.join(" ").replace(/\s+/g, " ")).toBe(escapeMrkdwn(text.trim()).replace(/\s+/g, " "));
  });
});

describe("Slack text and events", () => {
  it("decodes Slack's markup into what the user typed", () => {
    expect(
      decodeSlackText(
        "<@UHERALD01> hi <@U2|bob> in <#C1|general> <https://a.io|site> <https://b.io> &lt;3 &amp; <!here>",
        "UHERALD01",
      ),
    ).toBe("hi @bob in #general [site](https://a.io) https://b.io <3 & @here");
    expect(decodeSlackText("ask <@UHERALD01|herald> about it", "UHERALD01")).toBe("ask about it");
  });

  it("maps DM threads, group DMs and thread broadcasts", () => {
    const base = { type: "message", user: "U1", text: "x", ts: "1.000001" };
    const dmThread = parseSlackEvent({ ...base, channel: "D1", channel_type: "im", thread_ts: "0.5" }, me);
    const mpim = parseSlackEvent({ ...base, channel: "G1", channel_type: "mpim" }, me);
    const broadcast = parseSlackEvent(
      { ...base, channel: "C1", channel_type: "channel", subtype: "thread_broadcast", thread_ts: "0.5" },
      me,
    );
    expect(dmThread).toMatchObject({
      kind: "message",
      message: { chatType: "dm", chat: { chatId: "D1", threadId: "0.5" } },
    });
    expect(mpim).toMatchObject({
      kind: "message",
      message: { chatType: "group", mentioned: false, chat: { threadId: "1.000001" } },
    });
    expect(broadcast).toMatchObject({ kind: "message", message: { chat: { threadId: "0.5" } } });
  });

  it("skips what is not a user's new message and reports malformed payloads", () => {
    const base = { type: "message", channel: "C1", user: "U1", text: "x", ts: "1.000001" };
    expect(parseSlackEvent({ ...base, subtype: "channel_join" }, me)).toMatchObject({ kind: "skip" });
    expect(parseSlackEvent({ ...base, bot_id: "B9" }, me)).toMatchObject({
      kind: "skip",
      reason: "bot message",
    });
    expect(parseSlackEvent({ ...base, user: "UHERALD01" }, me)).toMatchObject({
      kind: "skip",
      reason: "own message",
    });
    expect(parseSlackEvent({ ...base, ts: 5 }, me)).toMatchObject({ kind: "malformed" });
    expect(parseSlackEvent(null, me)).toMatchObject({ kind: "malformed" });
  });
});
