/**
 * The URL and host checks against the spellings attackers use: `isLoopbackHost` (may the API run
 * without a key on this bind address?), the web fetch's address check (may an agent fetch this URL?)
 * and the HTTP guard's Host and Origin checks (is this request addressed to this server?). Decimal,
 * octal, hex and short IPv4, IPv4-mapped IPv6, NAT64, 6to4, trailing dots, userinfo, IDN and punycode,
 * uppercase, brackets and zone ids, from a table and then as random IPv4 addresses rendered in every
 * form, each checked against a reference classification written here independently.
 */
import { describe, expect, it } from "vitest";
import { blockedReason, createGuardedFetch, safeFetch, WebError } from "../../agent/tools/web/index.js";
import { resolveChecked } from "../../agent/tools/web/resolve.js";
import { isLoopbackHost } from "../../app/config.js";
import { isOwnHost, isOwnOrigin } from "../../gateway/http/guard.js";
import { fakeLookup } from "../fakes/web/lookup.js";

/** The address check alone, for a URL: no socket is opened, a name resolves through `lookup`. */
async function urlRefused(url: string, lookup = fakeLookup({})): Promise<boolean> {
  try {
    await resolveChecked(new URL(url), false, lookup);
    return false;
  } catch (err) {
    if (err instanceof WebError && err.reason === "blocked_address") return true;
    throw err;
  }
}

describe("isLoopbackHost is exact", () => {
  it.each([
    "127.0.0.1",
    "127.1",
    "127.255.255.254",
    "2130706433",
    "0177.0.0.1",
    "0x7f.1",
    "0X7F000001",
    "127.0.0.1.",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "::1",
    "[::1]",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
    "[::FFFF:7F00:1]",
    "１２７.０.０.１",
    "ⓛocalhost",
  ])("%s is loopback", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([
    "127.0.0.1.evil.com",
    "127.0.0.1.nip.io",
    "localhost.evil.com",
    "evil.localhost",
    "evil@127.0.0.1",
    "127.0.0.1:80",
    "127.0.0.1/",
    " 127.0.0.1",
    "%31%32%37.0.0.1",
    "::1%lo",
    "[::1%25lo]",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    "::127.0.0.1",
    "0.0.0.0",
    "::",
    "128.0.0.1",
    "10.0.0.1",
    "0x80.1",
    "xn--lcalhost-9ya",
    "",
  ])("%j is not", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe("the web fetch's address check", () => {
  it.each([
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://127.1/",
    "http://127.0.0.1./",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::FFFF:A9FE:A9FE]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a00:1::]/",
    "http://[fe80::1]/",
    "http://１２７.０.０.１/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::]/",
  ])("refuses %s without connecting", async (url) => {
    expect(await urlRefused(url)).toBe(true);
    // The same through the two real fetchers (they refuse before any socket opens).
    const viaSafe = await safeFetch(url).catch((e: unknown) => e);
    expect((viaSafe as WebError).reason).toBe("blocked_address");
    const viaGuarded = await createGuardedFetch({ hint: "h" })(url).catch((e: unknown) => e);
    expect((viaGuarded as WebError).reason).toBe("blocked_address");
  });

  it.each(["http://evil@127.0.0.1/", "http://user:pass@[::1]/"])(
    "refuses %s: the address check reads the host, not the userinfo",
    async (url) => {
      expect(await urlRefused(url)).toBe(true);
      const viaSafe = await safeFetch(url).catch((e: unknown) => e);
      expect((viaSafe as WebError).reason).toBe("blocked_address");
      // fetch itself refuses a URL with credentials, before any check or socket.
      const viaGuarded = await createGuardedFetch({ hint: "h" })(url).catch((e: unknown) => e);
      expect(String(viaGuarded)).toMatch(/credentials|blocked/);
    },
  );

  it.each(["http://localhost/", "http://LOCALHOST/", "http://ⓛocalhost/"])(
    "refuses %s through the system resolver",
    async (url) => {
      const err = await safeFetch(url).catch((e: unknown) => e);
      expect((err as WebError).reason).toBe("blocked_address");
    },
  );

  it("judges a name by what it resolves to, not by how it starts", async () => {
    const lookup = fakeLookup({ "127.0.0.1.evil.com": ["93.184.215.14"], "public.example": ["10.1.2.3"] });
    expect(await urlRefused("http://127.0.0.1.evil.com/", lookup)).toBe(false);
    expect(await urlRefused("http://public.example/", lookup)).toBe(true);
  });

  it("refuses zone ids, which URL parsing rejects, as invalid URLs", async () => {
    const err = await safeFetch("http://[fe80::1%25eth0]/").catch((e: unknown) => e);
    expect((err as WebError).reason).toBe("invalid_url");
    expect(blockedReason("fe80::1%eth0")).toContain("link-local");
    expect(blockedReason("::1%lo")).toContain("loopback");
  });
});

describe("the HTTP guard's Host and Origin checks", () => {
  it.each([
    ["127.0.0.1:8642", true],
    ["localhost:8642", true],
    ["LOCALHOST.:8642", true],
    ["[::1]:8642", true],
    ["127.1:8642", true],
    ["2130706433:8642", true],
    ["127.0.0.1", false],
    ["127.0.0.1:8643", false],
    ["evil.example:8642", false],
    ["127.0.0.1.evil.com:8642", false],
    ["evil@127.0.0.1:8642", false],
    ["127.0.0.1:8642/x", false],
    ["[::1%25lo]:8642", false],
    ["[64:ff9b::7f00:1]:8642", false],
    ["", false],
  ])("Host %j is this server on port 8642: %s", (host, own) => {
    expect(isOwnHost(host, 8642)).toBe(own);
  });

  it.each([
    ["http://127.0.0.1:8642", true],
    ["http://localhost:8642", true],
    ["http://[::1]:8642", true],
    ["https://127.0.0.1:8642", false],
    ["http://127.0.0.1:5173", false],
    ["http://127.0.0.1.evil.com:8642", false],
    ["http://evil.example:8642", false],
    ["http://127.1:8642", false],
    ["http://127.0.0.1:8642/", false],
    ["null", false],
  ])("Origin %j is this server's own: %s", (origin, own) => {
    expect(isOwnOrigin(origin, 8642)).toBe(own);
  });
});

// ---- Random IPv4 addresses in every spelling, against a reference classification. ----

/** The special-purpose IPv4 ranges (RFC 6890) as [first address, prefix length], numerically. */
const SPECIAL: [number, number][] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0000000, 24],
  [0xc0000200, 24],
  [0xc0586300, 24],
  [0xc0a80000, 16],
  [0xc6120000, 15],
  [0xc6336400, 24],
  [0xcb007100, 24],
  [0xe0000000, 4],
  [0xf0000000, 4],
];
const inRange = (n: number, [base, bits]: [number, number]) => n >>> (32 - bits) === base >>> (32 - bits);
const isSpecial = (n: number) => SPECIAL.some((r) => inRange(n, r));
const isLoopbackNumber = (n: number) => n >>> 24 === 127;

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const hex = (n: number) => n.toString(16);
/** How `n` can be written in a URL's host; `embeds` says whether it is an IPv6 form that leaves the machine. */
function spellings(n: number): { host: string; ipv4: boolean }[] {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const hi = hex(n >>> 16);
  const lo = hex(n & 0xffff);
  return [
    { host: `${a}.${b}.${c}.${d}`, ipv4: true },
    { host: String(n), ipv4: true },
    { host: `0x${hex(n)}`, ipv4: true },
    { host: `0X${hex(n).toUpperCase()}`, ipv4: true },
    { host: [a, b, c, d].map((p) => `0${p.toString(8)}`).join("."), ipv4: true },
    { host: [a, b, c, d].map((p) => `0x${hex(p)}`).join("."), ipv4: true },
    { host: `${a}.${(b << 16) | (c << 8) | d}`, ipv4: true },
    { host: `${a}.${b}.${(c << 8) | d}`, ipv4: true },
    { host: `${a}.${b}.${c}.${d}.`, ipv4: true },
    { host: `[::ffff:${a}.${b}.${c}.${d}]`, ipv4: true },
    { host: `[::ffff:${hi}:${lo}]`, ipv4: true },
    { host: `[64:ff9b::${hi}:${lo}]`, ipv4: false },
    { host: `[2002:${hi}:${lo}::]`, ipv4: false },
  ];
}

describe("random IPv4 addresses in every spelling", () => {
  const SEED = 20_260_330;
  const next = random(SEED);
  const numbers: number[] = [];
  // Half inside a special range (its low bits random), half anywhere.
  for (let i = 0; i < 200; i++) {
    const r = next();
    if (i % 2) numbers.push(r);
    else {
      const [base, bits] = SPECIAL[r % SPECIAL.length]!;
      numbers.push((base | (next() >>> bits)) >>> 0);
    }
  }

  it(`classifies each like the reference (seed ${SEED})`, async () => {
    const lookup = fakeLookup({});
    for (const n of numbers) {
      for (const { host, ipv4 } of spellings(n)) {
        const where = `${host} (${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255})`;
        expect(await urlRefused(`http://${host}/`, lookup), where).toBe(isSpecial(n));
        expect(isLoopbackHost(host), where).toBe(ipv4 && isLoopbackNumber(n));
        expect(isOwnHost(`${host}:8642`, 8642), where).toBe(ipv4 && isLoopbackNumber(n));
        expect(isOwnHost(`${host}:8643`, 8642), where).toBe(false);
      }
      const dotted = `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
      expect(blockedReason(dotted) !== undefined, dotted).toBe(isSpecial(n));
      expect(isOwnOrigin(`http://${dotted}:8642`, 8642), dotted).toBe(isLoopbackNumber(n));
    }
    expect(numbers.filter(isLoopbackNumber).length).toBeGreaterThan(0);
  });
});
