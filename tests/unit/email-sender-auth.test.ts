/**
 * The email sender check: RFC 8601 `Authentication-Results` as real receiving servers write them (Gmail,
 * Microsoft 365, rspamd, Fastmail), the forms a sender uses to smuggle a `pass` in (comments, quoted
 * local parts, headers of their own above or below), and which header and result count.
 */
import { describe, expect, it } from "vitest";
import { parseAuthResults } from "../../adapters/email/auth-results.js";
import {
  aligned,
  checkSender,
  type RawHeaderLine,
  type SenderCheckPolicy,
  summarizeSenderCheck,
} from "../../adapters/email/sender-auth.js";

const GMAIL = `mx.google.com;
       dkim=pass header.i=@example.com header.s=20230601 header.b=AbCdEf12;
       spf=pass (google.com: domain of alice@example.com designates 209.85.220.41 as permitted sender) smtp.mailfrom=alice@example.com;
       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com`;
const MICROSOFT = `spf=pass (sender IP is 40.107.1.1)
 smtp.mailfrom=example.com; dkim=pass (signature was verified)
 header.d=example.com;dmarc=pass action=none header.from=example.com;compauth=pass
 reason=100`;
const RSPAMD = `mail.example.org;
\tdkim=pass header.d=example.com header.s=dkim header.b=abc;
\tdmarc=pass (policy=none) header.from=example.com;
\tspf=pass (mail.example.org: domain of "bounce+x"@example.com designates 1.2.3.4 as permitted sender) smtp.mailfrom="bounce+x"@example.com`;
const FASTMAIL = `mx6.messagingengine.com;
    arc=none (no signatures found);
    dkim=pass (2048-bit rsa key sha256) header.d=example.com header.i=@example.com header.b=Ab12 header.a=rsa-sha256 header.s=fm1 x-bits=2048;
    dmarc=pass policy.published-domain-policy=none policy.applied-disposition=none (p=none,d=none,d.eval=none) policy.policy-from=p header.from=example.com;
    iprev=pass smtp.remote-ip=1.2.3.4 (x.example.com);
    spf=pass smtp.mailfrom=bounce@example.com smtp.helo=x.example.com`;

describe("parseAuthResults", () => {
  it("reads the headers of Gmail, Microsoft 365, rspamd and Fastmail", () => {
    const gmail = parseAuthResults(GMAIL);
    expect(gmail.authservId).toBe("mx.google.com");
    expect(gmail.results.map((r) => `${r.method}=${r.result}`)).toEqual([
      "dkim=pass",
      "spf=pass",
      "dmarc=pass",
    ]);
    expect(gmail.results[0]!.props.get("header.i")).toBe("@example.com");
    expect(gmail.results[2]!.props.get("header.from")).toBe("example.com");

    const microsoft = parseAuthResults(MICROSOFT);
    expect(microsoft.authservId).toBe("");
    expect(microsoft.results.map((r) => `${r.method}=${r.result}`)).toEqual([
      "spf=pass",
      "dkim=pass",
      "dmarc=pass",
      "compauth=pass",
    ]);
    expect(microsoft.results[2]!.props.get("action")).toBe("none");

    const rspamd = parseAuthResults(RSPAMD);
    expect(rspamd.authservId).toBe("mail.example.org");
    expect(rspamd.results[2]!.props.get("smtp.mailfrom")).toBe("bounce+x@example.com");

    const fastmail = parseAuthResults(FASTMAIL);
    expect(fastmail.results.map((r) => r.method)).toEqual(["arc", "dkim", "dmarc", "iprev", "spf"]);
    expect(fastmail.results[2]!.props.get("policy.published-domain-policy")).toBe("none");
    expect(fastmail.results[2]!.props.get("header.from")).toBe("example.com");
  });

  it("takes a version, `none`, a quoted authserv-id and any case", () => {
    expect(parseAuthResults("mx.herald.test 1; DKIM=Pass Header.D=owner.test").results[0]).toMatchObject({
      method: "dkim",
      result: "pass",
    });
    expect(
      parseAuthResults("mx.herald.test 1; dkim=pass header.d=owner.test").results[0]!.props.get("header.d"),
    ).toBe("owner.test");
    expect(parseAuthResults("mx.herald.test; none")).toEqual({ authservId: "mx.herald.test", results: [] });
    expect(parseAuthResults('"mx.herald.test"; spf=none').authservId).toBe("mx.herald.test");
  });

  it("turns nothing a sender wrote into a second result", () => {
    // A comment naming a pass.
    const comment = parseAuthResults(
      "mx.herald.test; dmarc=fail (dmarc=pass header.from=owner.test; (nested) \\) still) header.from=owner.test",
    );
    expect(comment.results.map((r) => `${r.method}=${r.result}`)).toEqual(["dmarc=fail"]);
    // A quoted MAIL FROM local part holding ';' and a result.
    const quoted = parseAuthResults(
      'mx.herald.test; spf=fail smtp.mailfrom="x;dmarc=pass header.from=owner.test"@evil.test',
    );
    expect(quoted.results).toHaveLength(1);
    expect(quoted.results[0]!.props.get("smtp.mailfrom")).toBe(
      "x;dmarc=pass header.from=owner.test@evil.test",
    );
    // A repeated property: the first one counts.
    const repeated = parseAuthResults("mx.herald.test; dkim=pass header.d=evil.test header.d=owner.test");
    expect(repeated.results[0]!.props.get("header.d")).toBe("evil.test");
  });

  it("marks a header off the grammar as malformed, keeping the name its first word gives", () => {
    const open = parseAuthResults("mx.herald.test; dkim=pass (unclosed header.d=owner.test");
    expect(open).toMatchObject({ authservId: "mx.herald.test", results: [], malformed: expect.any(String) });
    const twoWords = parseAuthResults("mx.herald.test extra words; dkim=pass header.d=owner.test");
    expect(twoWords).toMatchObject({
      authservId: "mx.herald.test",
      results: [],
      malformed: expect.any(String),
    });
    // A malformed result alone is left out; the others stand.
    const partly = parseAuthResults("mx.herald.test; dkim=pass header.d; spf=pass smtp.mailfrom=owner.test");
    expect(partly.results.map((r) => r.method)).toEqual(["spf"]);
    expect(partly.malformed).toBeUndefined();
  });
});

/** A mail's header lines, top first, from `Name: value` strings. */
function lines(...headers: string[]): RawHeaderLine[] {
  return headers.map((line) => ({ key: line.slice(0, line.indexOf(":")).toLowerCase(), line }));
}

const PINNED: SenderCheckPolicy = { trustedAuthservId: "mx.herald.test" };
const OWNER = "owner@owner.test";

function check(headers: RawHeaderLine[], policy = PINNED, fromAddresses = [OWNER]) {
  return checkSender({ headerLines: headers, fromAddresses }, policy);
}

describe("checkSender", () => {
  it("vouches on dmarc=pass for the From domain, or aligned dkim=pass or spf=pass", () => {
    const from = `From: Owner <${OWNER}>`;
    expect(
      check(lines("Authentication-Results: mx.herald.test; dmarc=pass header.from=owner.test", from)),
    ).toEqual({
      vouched: true,
      by: "dmarc",
      authservId: "mx.herald.test",
    });
    expect(
      check(lines("Authentication-Results: MX.Herald.Test; dkim=pass header.d=owner.test", from)),
    ).toMatchObject({
      vouched: true,
      by: "dkim",
    });
    expect(
      check(lines("Authentication-Results: mx.herald.test; dkim=pass header.i=@mail.owner.test", from)),
    ).toMatchObject({ vouched: true, by: "dkim" });
    expect(
      check(lines("Authentication-Results: mx.herald.test; spf=pass smtp.mailfrom=bounce@owner.test", from)),
    ).toMatchObject({ vouched: true, by: "spf" });
  });

  it("does not vouch on a pass for another domain, a fail, or no pass at all", () => {
    const from = `From: ${OWNER}`;
    const verdict = (ar: string) => check(lines(`Authentication-Results: ${ar}`, from));
    expect(verdict("mx.herald.test; dkim=pass header.d=evil.test")).toMatchObject({
      vouched: false,
      detail: expect.stringContaining("dkim=pass header.d=evil.test"),
    });
    expect(verdict("mx.herald.test; dmarc=pass header.from=evil.test").vouched).toBe(false);
    expect(verdict("mx.herald.test; dmarc=pass").vouched).toBe(false);
    expect(
      verdict("mx.herald.test; dkim=fail header.d=owner.test; spf=softfail smtp.mailfrom=owner.test").vouched,
    ).toBe(false);
    expect(verdict("mx.herald.test; spf=pass smtp.helo=owner.test").vouched).toBe(false);
    expect(verdict("mx.herald.test; none").vouched).toBe(false);
    // The domain's policy failed the mail (strict alignment): an aligned DKIM pass does not outweigh it.
    expect(
      verdict("mx.herald.test; dkim=pass header.d=mail.owner.test; dmarc=fail header.from=owner.test"),
    ).toEqual({
      vouched: false,
      detail: "mx.herald.test: dmarc=fail for owner.test",
    });
  });

  it("with a trusted authserv-id: only the topmost header of that server counts", () => {
    const from = `From: ${OWNER}`;
    // The server's own verdict on top, the sender's forged one below it with the same name.
    expect(
      check(
        lines(
          "Authentication-Results: mx.herald.test; dmarc=fail header.from=owner.test; dkim=none",
          "Received: from evil.test by mx.herald.test",
          "Authentication-Results: mx.herald.test; dmarc=pass header.from=owner.test",
          from,
        ),
      ).vouched,
    ).toBe(false);
    // Another server's header, above or below, is ignored.
    expect(
      check(
        lines(
          "Authentication-Results: relay.other.test; dmarc=pass header.from=owner.test",
          "Authentication-Results: mx.herald.test; spf=fail smtp.mailfrom=owner.test",
          from,
        ),
      ).vouched,
    ).toBe(false);
    expect(
      check(lines("Authentication-Results: evil.test; dmarc=pass header.from=owner.test", from)),
    ).toEqual({
      vouched: false,
      detail: "no Authentication-Results from mx.herald.test (found: evil.test)",
    });
    // The server's header is malformed: it still hides a well-formed forgery below.
    expect(
      check(
        lines(
          "Authentication-Results: mx.herald.test; dkim=pass (unclosed",
          "Authentication-Results: mx.herald.test; dmarc=pass header.from=owner.test",
          from,
        ),
      ),
    ).toMatchObject({ vouched: false, detail: expect.stringContaining("malformed") });
    expect(check(lines(from))).toEqual({ vouched: false, detail: "no Authentication-Results header" });
  });

  it("without a trusted authserv-id: the topmost header counts, whoever wrote it", () => {
    const from = `From: ${OWNER}`;
    const topmost = {};
    expect(
      check(
        lines(
          "Authentication-Results: mx.any.test; dmarc=pass header.from=owner.test",
          "Authentication-Results: other.test; dmarc=fail header.from=owner.test",
          from,
        ),
        topmost,
      ).vouched,
    ).toBe(true);
    expect(
      check(
        lines(
          "Authentication-Results: mx.any.test; dmarc=fail header.from=owner.test",
          "Authentication-Results: mx.any.test; dmarc=pass header.from=owner.test",
          from,
        ),
        topmost,
      ).vouched,
    ).toBe(false);
    expect(
      check(lines(`Authentication-Results: ${MICROSOFT}`, "From: a@example.com"), topmost, ["a@example.com"]),
    ).toMatchObject({ vouched: true, by: "dmarc", authservId: "" });
  });

  it("vouches for no mail with two From: headers or two From: addresses", () => {
    const ar = "Authentication-Results: mx.herald.test; dmarc=pass header.from=owner.test";
    expect(check(lines(ar, "From: a@evil.test", `From: ${OWNER}`)).vouched).toBe(false);
    expect(check(lines(ar, `From: ${OWNER}, a@evil.test`), PINNED, [OWNER, "a@evil.test"]).vouched).toBe(
      false,
    );
  });

  it("compares international domains in either spelling", () => {
    const from = "From: anna@bücher.example";
    expect(
      check(
        lines("Authentication-Results: mx.herald.test; dmarc=pass header.from=xn--bcher-kva.example", from),
        PINNED,
        ["anna@bücher.example"],
      ).vouched,
    ).toBe(true);
  });
});

describe("aligned", () => {
  it("is the same domain or one a subdomain of the other, never a bare top-level domain", () => {
    expect(aligned("owner.test", "owner.test")).toBe(true);
    expect(aligned("owner.test", "mail.owner.test")).toBe(true);
    expect(aligned("mail.owner.test", "owner.test")).toBe(true);
    expect(aligned("a.owner.test", "b.owner.test")).toBe(false);
    expect(aligned("test", "owner.test")).toBe(false);
    expect(aligned("evilowner.test", "owner.test")).toBe(false);
    expect(aligned(undefined, "owner.test")).toBe(false);
  });
});

describe("summarizeSenderCheck", () => {
  it("says whether senders are checked and what is trusted", () => {
    expect(summarizeSenderCheck({ verifySender: false })).toMatchObject({ ok: false, mode: "off" });
    expect(summarizeSenderCheck({})).toMatchObject({
      ok: true,
      mode: "topmost",
      fix: expect.stringContaining("EMAIL_TRUSTED_AUTHSERV_ID"),
    });
    expect(summarizeSenderCheck({ trustedAuthservId: "mx.google.com" }).text).toContain("from mx.google.com");
  });
});
