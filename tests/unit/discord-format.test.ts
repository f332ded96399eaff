import { describe, expect, it } from "vitest";
import {
  chunkNonce,
  formatChunks,
  planParts,
  renderTable,
  toDiscordMarkdown,
} from "../../adapters/discord/format.js";
import { cleanText } from "../../adapters/discord/parse.js";

describe("toDiscordMarkdown", () => {
  it("passes what Discord renders through unchanged", () => {
    const text = "# Title\n\n**bold** _it_ ~~gone~~ `code` [link](https://x.y)\n> quote\n- item\n1. one";
    expect(toDiscordMarkdown(text)).toBe(text);
  });

  it("never touches fenced code or inline code", () => {
    const text = "```md\n| a | b |\n|---|---|\n#### h\n![x](y)\n```\nuse `![alt](url)` literally";
    expect(toDiscordMarkdown(text)).toBe(text);
  });

  it("renders tables as aligned code blocks, with inline markup and <br> removed", () => {
    expect(renderTable(["| Name | Note |", "|:--|--:|", "| **Zoë** | a<br>b |", "| Al | `x` |"])).toBe(
      "```\nName | Note\n-----+-----\nZoë  | a b\nAl   | x\n```",
    );
  });

  it("turns deep headings bold, images into links, rules and task boxes into characters", () => {
    expect(toDiscordMarkdown("#### Deep ####")).toBe("**Deep**");
    expect(toDiscordMarkdown("see ![a chart](https://e.x/c.png) and ![](https://e.x/d.png)")).toBe(
      "see [a chart](https://e.x/c.png) and https://e.x/d.png",
    );
    expect(toDiscordMarkdown("a\n\n---\n\nb")).toBe("a\n\n──────────\n\nb");
    expect(toDiscordMarkdown("- [ ] todo\n- [x] done")).toBe("- ☐ todo\n- ☑ done");
    expect(toDiscordMarkdown("line<br>next")).toBe("line\nnext");
  });
});

describe("chunks and nonces", () => {
  it("splits at 2,000 characters and is deterministic", () => {
    const text = "word ".repeat(1000);
    const a = formatChunks(text);
    expect(a.length).toBe(3);
    for (const c of a) expect(c.length).toBeLessThanOrEqual(2000);
    expect(formatChunks(text)).toEqual(a);
  });

  it("derives a per-chunk nonce of at most 25 characters, stable across retries", () => {
    const key = "outbox:01J8ZK3Q4W5E6R7T8Y9U0I1O2P-with-a-long-suffix";
    expect(chunkNonce(key, 0)).toHaveLength(25);
    expect(chunkNonce(key, 0)).toBe(chunkNonce(key, 0));
    expect(chunkNonce(key, 1)).not.toBe(chunkNonce(key, 0));
  });

  it("puts up to ten files on the last text chunk and the rest on their own messages", () => {
    const files = Array.from({ length: 12 }, (_, i) => ({ path: `/tmp/f${i}` }));
    const parts = planParts("hello", files);
    expect(parts.map((p) => [p.content, p.files.length])).toEqual([
      ["hello", 10],
      ["", 2],
    ]);
    expect(planParts("", files.slice(0, 1)).map((p) => [p.content, p.files.length])).toEqual([["", 1]]);
  });
});

describe("cleanText", () => {
  it("removes the bot's mentions and names the others", () => {
    const names = {
      users: new Map([["2", "Bob"]]),
      roles: new Map([["9", "Mods"]]),
      channels: new Map([["5", "general"]]),
    };
    expect(cleanText("<@1> ask <@!2> and <@&9> in <#5> <@&7>", ["<@1>", "<@!1>", "<@&7>"], names)).toBe(
      "ask @Bob and @Mods in #general",
    );
    expect(cleanText("<@!1>\n/new", ["<@1>", "<@!1>"], names)).toBe("/new");
  });
});
