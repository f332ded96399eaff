/**
 * Whether the server that received a mail vouches for its `From:` address. Herald checks no signature
 * itself: it reads the verdict the receiving server wrote into `Authentication-Results` (RFC 8601), and
 * only that server's header. Anyone can put any header into a mail they send; the receiving server adds
 * its own on top, so:
 *
 * - with a trusted authserv-id (`EMAIL_TRUSTED_AUTHSERV_ID`): the topmost header whose authserv-id is
 *   that name (compared without case) is the verdict; every other header is ignored, above it (another
 *   server's) or below it (the sender's own, with that name or any other);
 * - without one: the topmost header, whoever wrote it. That holds only when the receiving server writes
 *   one into every mail; a server that writes none leaves the sender's own header on top.
 *
 * RFC 8601 also has the receiving server delete incoming headers that claim its name; taking only the
 * topmost one also holds against a server that does not (it prepends its own above them). A server
 * that writes one header per check (OpenDKIM, then OpenDMARC) is judged by its last, topmost one.
 *
 * The verdict vouches for the From domain when it says `dmarc=pass` with `header.from` equal to it, or
 * (with no `dmarc=fail` for it) `dkim=pass` whose `header.d` (else the domain of `header.i`) is aligned
 * with it, or `spf=pass` whose `smtp.mailfrom` domain is aligned with it. Aligned: the same domain, or
 * one a subdomain of the other (e.g. `mail.example.com` and `example.com`). That is simpler than DMARC's
 * organizational domain, which needs the Public Suffix List: it refuses siblings such as `a.example.com`
 * for `b.example.com`, and accepts a public suffix with two labels (`github.io`) for its subdomains,
 * whose signing key only the suffix's owner holds; a bare top-level domain aligns with nothing.
 */
import { domainToASCII } from "node:url";
import { type AuthResult, type AuthResults, parseAuthResults } from "./auth-results.js";

/** How mail senders are checked; see the file's comment. */
export interface SenderCheckPolicy {
  /** The receiving server's authserv-id; undefined: the topmost header is trusted. */
  trustedAuthservId?: string | undefined;
}

/** The check's outcome: who vouched, or why nobody did (for the log, never the mail's body). */
export type SenderVerdict =
  | { vouched: true; by: "dmarc" | "dkim" | "spf"; authservId: string }
  | { vouched: false; detail: string };

/** One raw header line as mailparser keeps it (`key` lowercase, `line` with name and folding). */
export interface RawHeaderLine {
  key: string;
  line: string;
}

/** What the check reads of a mail. */
export interface SenderCheckInput {
  /** The mail's header lines, top first. */
  headerLines: readonly RawHeaderLine[];
  /** Every address the From: header names (lowercase); Herald acts on the first. */
  fromAddresses: readonly string[];
}

/**
 * Decides whether the mail's sender is vouched for. A mail with more than one From: header or address
 * never is: the server's verdict may be about another one than Herald would act on.
 */
export function checkSender(mail: SenderCheckInput, policy: SenderCheckPolicy): SenderVerdict {
  const fromHeaders = mail.headerLines.filter((h) => h.key === "from").length;
  if (fromHeaders !== 1 || mail.fromAddresses.length !== 1) {
    return {
      vouched: false,
      detail: `${fromHeaders} From: headers naming ${mail.fromAddresses.length} addresses (a vouched mail has one of each)`,
    };
  }
  const fromDomain = domainOf(mail.fromAddresses[0]);
  if (!fromDomain) return { vouched: false, detail: "no domain in From:" };
  const headers = mail.headerLines
    .filter((h) => h.key === "authentication-results")
    .map((h) => parseAuthResults(headerValue(h.line)));
  const wanted = policy.trustedAuthservId?.toLowerCase();
  const chosen =
    wanted === undefined ? headers[0] : headers.find((h) => h.authservId.toLowerCase() === wanted);
  if (!chosen) {
    if (headers.length === 0) return { vouched: false, detail: "no Authentication-Results header" };
    const seen = headers
      .slice(0, 5)
      .map((h) => (h.authservId || "(none)").slice(0, 100))
      .join(", ");
    return {
      vouched: false,
      detail: `no Authentication-Results from ${policy.trustedAuthservId} (found: ${seen})`,
    };
  }
  if (chosen.malformed) {
    return {
      vouched: false,
      detail: `the Authentication-Results from ${chosen.authservId.slice(0, 100) || "(none)"} is malformed: ${chosen.malformed}`,
    };
  }
  return judge(chosen, fromDomain);
}

/** The verdict of one trusted header for `fromDomain`. */
function judge(header: AuthResults, fromDomain: string): SenderVerdict {
  const id = header.authservId.slice(0, 100);
  const of = (method: string) => header.results.filter((r) => r.method === method);
  const dmarc = of("dmarc").filter((r) => domainOf(r.props.get("header.from")) === fromDomain);
  if (dmarc.some((r) => r.result === "pass")) return { vouched: true, by: "dmarc", authservId: id };
  // The domain's own policy failed the mail (strict alignment, say): no other result outweighs that.
  if (dmarc.some((r) => r.result === "fail")) {
    return { vouched: false, detail: `${id}: dmarc=fail for ${fromDomain}` };
  }
  const dkim = of("dkim").filter((r) => r.result === "pass");
  if (dkim.some((r) => aligned(domainOf(r.props.get("header.d") ?? r.props.get("header.i")), fromDomain))) {
    return { vouched: true, by: "dkim", authservId: id };
  }
  const spf = of("spf").filter((r) => r.result === "pass");
  if (spf.some((r) => aligned(domainOf(r.props.get("smtp.mailfrom")), fromDomain))) {
    return { vouched: true, by: "spf", authservId: id };
  }
  // A sender writes much of this (DKIM domains, MAIL FROM): the log gets a bounded excerpt.
  const said = header.results.slice(0, 8).map(describe).join("; ") || "no results";
  return {
    vouched: false,
    detail: `${id || "(no authserv-id)"}: nothing aligned with ${fromDomain} passed (${said})`,
  };
}

/** `dkim=pass header.d=example.com`: the properties that matter here, each cut to 100 characters. */
function describe(r: AuthResult): string {
  const keys = ["header.from", "header.d", "header.i", "smtp.mailfrom"].filter((k) => r.props.has(k));
  const words = [`${r.method}=${r.result}`, ...keys.map((k) => `${k}=${r.props.get(k)}`)];
  return words.map((w) => w.slice(0, 100)).join(" ");
}

/**
 * True when `domain` and `fromDomain` are the same or one is a subdomain of the other, the shorter having
 * at least two labels.
 */
export function aligned(domain: string | undefined, fromDomain: string): boolean {
  if (!domain) return false;
  if (domain === fromDomain) return true;
  const [short, long] = domain.length < fromDomain.length ? [domain, fromDomain] : [fromDomain, domain];
  return short.includes(".") && long.endsWith(`.${short}`);
}

/** The lowercase ASCII domain of an address or a bare domain (`<a@b.example>`, `b.example.`), if any. */
export function domainOf(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const at = address.lastIndexOf("@");
  const raw = (at >= 0 ? address.slice(at + 1) : address)
    .replace(/>$/, "")
    .replace(/\.$/, "")
    .trim()
    .toLowerCase();
  if (!raw) return undefined;
  // Both spellings of an international domain (bücher.example, xn--bcher-kva.example) compare equal.
  return domainToASCII(raw) || undefined;
}

/** The header's value: the line after its name and colon (still folded). */
function headerValue(line: string): string {
  const colon = line.indexOf(":");
  return colon < 0 ? "" : line.slice(colon + 1);
}

/** What `herald doctor` and the adapter's start say about the sender check. */
export interface SenderCheckSummary {
  /** false: senders are not checked at all. */
  ok: boolean;
  /** `off` believes every From:; `topmost` trusts whichever server wrote the topmost header. */
  mode: "off" | "topmost" | "pinned";
  text: string;
  fix?: string | undefined;
}

/** Describes the sender check of these settings (`email.verify_sender`, `email.trusted_authserv_id`). */
export function summarizeSenderCheck(settings: {
  verifySender?: boolean | undefined;
  trustedAuthservId?: string | undefined;
}): SenderCheckSummary {
  if (settings.verifySender === false) {
    return {
      ok: false,
      mode: "off",
      text: "email sender check: off (EMAIL_VERIFY_SENDER=false): the From: address of every mail is believed, so anyone who writes an allowed user's address (the owner's too) gets that user's rights",
      fix: "remove EMAIL_VERIFY_SENDER=false and set EMAIL_TRUSTED_AUTHSERV_ID to your mail server's authserv-id",
    };
  }
  if (!settings.trustedAuthservId) {
    return {
      ok: true,
      mode: "topmost",
      text: "email sender check: on; the topmost Authentication-Results header is trusted whoever wrote it (safe only if your mail server writes one into every mail)",
      fix: "set EMAIL_TRUSTED_AUTHSERV_ID to the first word of the Authentication-Results header your mail server writes (open a received mail's source; e.g. mx.google.com)",
    };
  }
  return {
    ok: true,
    mode: "pinned",
    text: `email sender check: on; trusts the topmost Authentication-Results header from ${settings.trustedAuthservId} (dmarc=pass, or aligned dkim=pass or spf=pass)`,
  };
}
