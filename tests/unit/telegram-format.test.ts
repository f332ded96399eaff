import { describe, expect, it } from "vitest";
import { formatChunks, markdownToHtml } from "../../adapters/telegram/format.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";

/** What Telegram would show, and the entities it would apply. */
function shown(html: string) {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed;
}

describe("telegram format: Markdown → HTML", () => {
  it("renders inline styles and escapes everything else", () => {
    const html = markdownToHtml('**b** *i* ~~s~~ `a<b>&c` 1 < 2 & 3 > 2 "q" AT&amp;T');
    expect(html).toBe(
      "<b>b</b> <i>i</i> <s>s</s> <code>a&lt;b&gt;&amp;c</code> 1 &lt; 2 &amp; 3 &gt; 2 &quot;q&quot; AT&amp;T",
    );
    expect(shown(html).text).toBe('b i s a<b>&c 1 < 2 & 3 > 2 "q" AT&T');
  });

  it("keeps code blocks with their language, escaped", () => {
    const html = markdownToHtml("```ts\nconst a = b < c && d;\n```");
    expect(html).toBe('<pre><code class="language-ts">const a = b &lt; c &amp;&amp; d;</code></pre>');
    expect(shown(html).entities).toEqual([{ type: "pre", offset: 0, length: 21, language: "ts" }]);
  });

  it("links only safe URLs; headings bold; lists as text bullets; quotes not nested", () => {
    const md =
      "# Title\n\n[ok](https://a.example/x?y=1&z=2) [bad](javascript:alert(1))\n\n1. one\n2. two\n   - sub\n\n> outer\n> > inner";
    const out = shown(markdownToHtml(md));
    expect(out.text).toBe("Title\n\nok bad\n\n1. one\n2. two\n   • sub\n\nouter\n\ninner");
    expect(out.entities.map((e) => e.type)).toEqual(["bold", "text_link", "blockquote"]);
    expect(out.entities[1]!.url).toBe("https://a.example/x?y=1&z=2");
  });

  it("renders tables as aligned preformatted text", () => {
    const out = shown(markdownToHtml("| Name | Qty |\n|---|--:|\n| Apple | 3 |\n| **Kiwi** | 12 |"));
    expect(out.text).toBe("Name  | Qty\n------+----\nApple |   3\nKiwi  |  12");
    expect(out.entities).toEqual([{ type: "pre", offset: 0, length: out.text.length }]);
  });

  it("never produces HTML Telegram would refuse, whatever the model writes", () => {
    const nasty = [
      "<script>x</script>",
      "**unclosed",
      "`",
      "[a](",
      "> > > deep",
      "<b>raw</b>",
      "&nbsp;&bogus;",
      "***",
      "| a |\n|-|",
    ];
    for (const md of nasty) expect(parseTelegramHtml(markdownToHtml(md)).ok, md).toBe(true);
  });
});

describe("telegram format: chunks", () => {
  it("is deterministic and keeps every chunk under the limit as Telegram counts it", () => {
    const md = Array.from(
      { length: 80 },
      (_, i) => `Paragraph ${i}: **bold ${i}** and \`code\` 😀 ${"text ".repeat(20)}`,
    ).join("\n\n");
    const a = formatChunks(md, 1000);
    expect(formatChunks(md, 1000)).toEqual(a);
    expect(a.length).toBeGreaterThan(5);
    for (const c of a) expect(shown(c.html).text.length).toBeLessThanOrEqual(1000);
  });

  it("cuts a long table like code: every chunk a table block", () => {
    const rows = Array.from({ length: 300 }, (_, i) => `| row ${i} | ${i * 3} |`).join("\n");
    const chunks = formatChunks(`| Name | Value |\n|---|---|\n${rows}`, 1000);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(shown(c.html).entities[0]).toMatchObject({ type: "pre", offset: 0 });
  });

  it("does not cut inside a bold run that spans lines", () => {
    const md = `${"word ".repeat(150)}\n**start of bold\n${"bold ".repeat(40)}\nend of bold** tail ${"more ".repeat(60)}`;
    for (const c of formatChunks(md, 1000)) expect(c.html).not.toContain("**");
  });
});
