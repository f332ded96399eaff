/**
 * safeFetch and extractPage over the wire against the fake page server (tests/fakes/web). The fake lives
 * on 127.0.0.1, so page tests allow private addresses; the refusal tests use the default policy, and the
 * "public page redirects to loopback" test allows exactly one made-up public host name.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  blockedReason,
  createWorkerHtmlConverter,
  extractPage,
  type SafeFetchOptions,
  safeFetch,
  WebError,
} from "../../agent/tools/web/index.js";
import { isAbortError } from "../../core/errors.js";
import { type FakeWeb, HUGE_BYTES, startFakeWeb } from "../fakes/web/index.js";
import { fakeLookup } from "../fakes/web/lookup.js";

let web: FakeWeb;
beforeAll(async () => {
  web = await startFakeWeb();
});
afterAll(() => web.close());

const open: SafeFetchOptions = { allowPrivate: true };

async function refusal(promise: Promise<unknown>): Promise<WebError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebError);
  return err as WebError;
}

describe("blockedReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT"],
    ["169.254.169.254", "cloud metadata"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback (::1)"],
    ["::ffff:127.0.0.1", "loopback (127.0.0.0/8), inside an IPv6 address"],
    ["::ffff:7f00:1", "loopback (127.0.0.0/8), inside an IPv6 address"],
    ["::ffff:a9fe:a9fe", "cloud metadata"],
    ["::ffff:10.1.2.3", "private"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["not-an-ip", "not an IP address"],
  ])("refuses %s (%s)", (address, label) => {
    expect(blockedReason(address)).toContain(label);
  });

  it.each([
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
  ])("allows public %s", (address) => {
    expect(blockedReason(address)).toBeUndefined();
  });
});

describe("the default policy refuses non-public targets before connecting", () => {
  it.each([
    ["127.0.0.1", () => `http://127.0.0.1:${web.port}/article`],
    ["10.0.0.1", () => "http://10.0.0.1/"],
    ["[::1]", () => `http://[::1]:${web.port}/article`],
    ["169.254.169.254", () => "http://169.254.169.254/latest/meta-data/"],
    ["localhost (resolved by the system resolver)", () => `http://localhost:${web.port}/article`],
    ["[::ffff:127.0.0.1]", () => `http://[::ffff:127.0.0.1]:${web.port}/article`],
    ["0.0.0.0", () => `http://0.0.0.0:${web.port}/article`],
    ["2130706433 (127.0.0.1 as one number)", () => `http://2130706433:${web.port}/article`],
    ["0x7f.1 (127.0.0.1 in hex shorthand)", () => `http://0x7f.1:${web.port}/article`],
  ])("%s", async (_label, url) => {
    const before = web.paths.length;
    const started = Date.now();
    const err = await refusal(extractPage(url()));
    expect(err.reason).toBe("blocked_address");
    expect(err.code).toBe("invalid_input");
    expect(err.message).toMatch(/Web tools fetch only public addresses/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(web.paths.length).toBe(before);
  });

  it("checks what an injected resolver answers, and refuses a name with any private address", async () => {
    const lookup = fakeLookup({
      "intranet.example": ["10.1.2.3"],
      "split.example": ["93.184.215.14", "127.0.0.1"],
    });
    expect((await refusal(safeFetch("http://intranet.example/", { lookup }))).message).toContain(
      "intranet.example resolves to 10.1.2.3",
    );
    expect((await refusal(safeFetch("http://split.example/", { lookup }))).reason).toBe("blocked_address");
  });

  it("refuses other schemes and names that do not resolve", async () => {
    expect((await refusal(safeFetch("file:///etc/passwd"))).reason).toBe("unsupported_scheme");
    expect((await refusal(safeFetch("ftp://ftp.example.com/x"))).reason).toBe("unsupported_scheme");
    expect((await refusal(safeFetch("not a url"))).reason).toBe("invalid_url");
    const err = await refusal(safeFetch("http://nowhere.invalid/", { lookup: fakeLookup({}) }));
    expect(err.reason).toBe("dns");
  });
});

describe("redirects", () => {
  it("follows a 3-hop chain (302, 301, 307; relative and absolute Locations) and reports it", async () => {
    const page = await safeFetch(`${web.url}/hop/1`, open);
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${web.url}/article`);
    expect(page.redirects).toEqual([`${web.url}/hop/1`, `${web.url}/hop/2`, `${web.url}/hop/3`]);
  });

  it("stops after maxRedirects", async () => {
    const before = web.paths.length;
    const err = await refusal(safeFetch(`${web.url}/loop`, { ...open, maxRedirects: 3 }));
    expect(err.reason).toBe("too_many_redirects");
    expect(err.message).toContain("more than 3 times");
    expect(web.paths.length - before).toBe(4);
  });

  it("refuses a public page that redirects to 127.0.0.1, without requesting the loopback URL", async () => {
    // public.example resolves (through the injected resolver) to the fake's 127.0.0.1, and the policy allows
    // that one host name; every other host goes through the real check, which must refuse the 2nd hop.
    const lookup = fakeLookup({ "public.example": ["127.0.0.1"] });
    const allowPrivate = ({ hostname }: { hostname: string }) => hostname === "public.example";
    const before = web.paths.length;
    const err = await refusal(
      extractPage(`http://public.example:${web.port}/to-loopback`, { lookup, allowPrivate }),
    );
    expect(err.reason).toBe("blocked_address");
    expect(err.url).toBe(`${web.url}/article`);
    expect(err.message).toContain("127.0.0.1 is a loopback");
    expect(web.paths.slice(before)).toEqual(["/to-loopback"]);
  });

  it("refuses a redirect to the metadata address and to file://", async () => {
    const lookup = fakeLookup({ "public.example": ["127.0.0.1"] });
    const allowPrivate = ({ hostname }: { hostname: string }) => hostname === "public.example";
    const base = `http://public.example:${web.port}`;
    expect((await refusal(safeFetch(`${base}/to-metadata`, { lookup, allowPrivate }))).message).toContain(
      "169.254.169.254 is a link-local and cloud metadata",
    );
    expect((await refusal(safeFetch(`${base}/to-file`, { lookup, allowPrivate }))).reason).toBe(
      "unsupported_scheme",
    );
  });

  it("connects to the address it checked: one resolution per hop, none by the socket", async () => {
    // pinned.example exists only in the injected resolver: if Node resolved it again to connect, it would fail.
    const lookup = fakeLookup({ "pinned.example": ["127.0.0.1"] });
    const page = await safeFetch(`http://pinned.example:${web.port}/hop/1`, { ...open, lookup });
    expect(page.status).toBe(200);
    expect(page.url).toBe(`http://127.0.0.1:${web.port}/article`);
    // hop/1 → hop/2 on pinned.example; hop/2 redirects to the 127.0.0.1 literal, which needs no resolution.
    expect(lookup.calls).toEqual(["pinned.example", "pinned.example"]);
  });
});

describe("limits", () => {
  it("stops a 50 MB body at the 5 MB cap and closes the connection", async () => {
    const err = await refusal(safeFetch(`${web.url}/huge`, open));
    expect(err.reason).toBe("too_large");
    expect(err.message).toContain("larger than the 5 MB cap");
    await web.huge.finished;
    expect(web.huge.clientClosed).toBe(true);
    expect(web.huge.bytesSent).toBeLessThan(HUGE_BYTES / 2);
  });

  it("refuses a body whose Content-Length is over the cap before reading it", async () => {
    const err = await refusal(safeFetch(`${web.url}/huge-declared`, { ...open, maxBytes: 1024 * 1024 }));
    expect(err.message).toContain("it declares 50 MB");
  });

  it("times out a server that stalls mid-body", async () => {
    const started = Date.now();
    const err = await refusal(extractPage(`${web.url}/slow`, { ...open, timeoutMs: 500 }));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(err).toMatchObject({ reason: "timeout", retryable: true });
    expect(err.message).toContain("within 0.5 s");
  });

  it("stops when the caller aborts, as an abort", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const err = await refusal(safeFetch(`${web.url}/slow`, { ...open, signal: controller.signal }));
    expect(err.reason).toBe("aborted");
    expect(isAbortError(err)).toBe(true);
  });

  it("refuses an image by its content type", async () => {
    const err = await refusal(extractPage(`${web.url}/image.png`, open));
    expect(err.reason).toBe("unsupported_type");
    expect(err.message).toBe("web_extract reads text, HTML and PDF pages; this URL is image/png");
  });

  it("says which status a failed page answered", async () => {
    const err = await refusal(extractPage(`${web.url}/missing`, open));
    expect(err).toMatchObject({ reason: "http_status", status: 404, retryable: false });
  });
});

describe("extractPage", () => {
  it("keeps the article as Markdown and drops nav, ads, sidebar, footer and scripts", async () => {
    const page = await extractPage(`${web.url}/article`, open);
    expect(page.title).toBe("How a typo in a route filter took down an exchange");
    expect(page.contentType).toBe("text/html");
    expect(page.truncated).toBe(false);
    const md = page.markdown;
    expect(md).toContain("Engineers at a regional internet exchange spent most of Tuesday");
    expect(md).toContain("“Nothing about this was exotic,”");
    expect(md).toMatch(/^## What changed$/m);
    expect(md).toMatch(/^- +Generate filters from registry data$/m);
    expect(md).toContain("```\nip prefix-list CUSTOMER-IN seq 40 permit 203.0.113.0/24 le 32\n```");
    expect(md).toContain(`[the full report](${web.url}/reports/2026-11-ix.pdf)`);
    for (const chrome of [
      "Subscribe for $1",
      "SPONSORED-AD-MARKER",
      "NEWSLETTER-FOOTER-MARKER",
      "Most read",
      "TRACKING-SCRIPT-MARKER",
      "Privacy policy",
    ])
      expect(md).not.toContain(chrome);
  });

  it("reads gzip and brotli pages like the plain one, and sends a browser User-Agent", async () => {
    const plain = await extractPage(`${web.url}/article`, open);
    expect((await extractPage(`${web.url}/gzip`, open)).markdown).toBe(plain.markdown);
    expect((await extractPage(`${web.url}/br`, open)).markdown).toBe(plain.markdown);
    expect(web.userAgents.at(-1)).toMatch(/^Mozilla\/5\.0 .*Chrome\/\d+/);
  });

  it("converts the whole body, minus chrome, when the page is not an article", async () => {
    const page = await extractPage(`${web.url}/hub`, open);
    expect(page.title).toBe("Status");
    expect(page.markdown).toContain("HUB-BODY-MARKER Updated 2 minutes ago.");
    expect(page.markdown).toContain("| Component | State |\n| --- | --- |\n| [API](");
    expect(page.markdown).toContain(`| [Search index](${web.url}/status/search-index) | Degraded |`);
    expect(page.markdown).toContain(`| [Billing](${web.url}/status/billing) | Operational |\n\n`);
    expect(page.markdown).toContain(`[Incident history](${web.url}/status/history)`);
    for (const chrome of ["HUB-SCRIPT-MARKER", "Subscribe for $1", "NEWSLETTER-FOOTER-MARKER"])
      expect(page.markdown).not.toContain(chrome);
  });

  it("cuts at maxChars and says so", async () => {
    const page = await extractPage(`${web.url}/long?n=200`, { ...open, maxChars: 2_000 });
    expect(page.truncated).toBe(true);
    const [kept = "", note = ""] = page.markdown.split("\n\n[Truncated: ");
    expect(kept.length).toBeLessThanOrEqual(2_000);
    expect(kept).toContain("Paragraph 1.");
    expect(note).toMatch(/^the page has \d+ characters; this is the first \d+\./);
  });

  it("passes text and JSON through, decoding the declared charset", async () => {
    expect((await extractPage(`${web.url}/notes.txt`, open)).markdown).toBe("Plain notes.\nSecond line.");
    expect((await extractPage(`${web.url}/latin1`, open)).markdown).toBe("Café crème, naïve");
    const json = await extractPage(`${web.url}/data.json`, open);
    expect(json.contentType).toBe("application/json");
    expect(json.markdown).toBe(
      '```json\n{\n  "name": "herald",\n  "tags": [\n    "a",\n    "b"\n  ]\n}\n```',
    );
  });

  it("hands PDF bytes to extractPdf, and refuses a PDF when no extractor is configured", async () => {
    const raw = await safeFetch(`${web.url}/report.pdf`, open);
    expect(raw.contentType).toBe("application/pdf");
    expect(raw.text).toBeUndefined();
    expect(Buffer.from(raw.bytes.subarray(0, 5)).toString()).toBe("%PDF-");
    const err = await refusal(extractPage(`${web.url}/report.pdf`, open));
    expect(err.reason).toBe("unsupported_type");
    expect(err.message).toContain("extractPdf");
    let received = 0;
    const page = await extractPage(`${web.url}/report.pdf`, {
      ...open,
      extractPdf: async (bytes) => {
        received = bytes.length;
        return "Hello PDF";
      },
    });
    expect(received).toBe(raw.bytes.length);
    expect(page).toMatchObject({
      title: "report.pdf",
      markdown: "Hello PDF",
      contentType: "application/pdf",
    });
  });
});

describe("createWorkerHtmlConverter", () => {
  const converter = createWorkerHtmlConverter();
  afterAll(() => converter.close());

  it("gives extractPage the same Markdown as the inline converter, off the main thread", async () => {
    const inline = await extractPage(`${web.url}/article`, open);
    const threaded = await extractPage(`${web.url}/article`, { ...open, convertHtml: converter.convert });
    expect(threaded).toEqual(inline);
  });

  it("cancels a conversion mid-page, and the next one still works", async () => {
    const paragraphs = Array.from(
      { length: 20_000 },
      (_, i) => `<p>Paragraph ${i} of a page too long to convert quickly.</p>`,
    );
    const big = `<html><body><article>${paragraphs.join("")}</article></body></html>`;
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const err = await refusal(converter.convert(big, "http://big.test/", controller.signal));
    expect(err.reason).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_000);
    const after = await converter.convert(
      "<html><body><p>Still <b>here</b>.</p></body></html>",
      "http://x.test/",
    );
    expect(after.markdown).toBe("Still **here**.");
  });
});
