/**
 * Which IP addresses an agent's web fetch may connect to. Everything that is not a public unicast
 * address is refused: an agent told to "read http://169.254.169.254/latest/meta-data" must not reach the
 * cloud metadata service, the owner's router or a database on the loopback interface.
 */
import { isIP } from "node:net";

/** A CIDR range; `bits` counts from the most significant bit. */
interface Range {
  readonly bytes: readonly number[];
  readonly bits: number;
  readonly label: string;
}

function v4(cidr: string, label: string): Range {
  const [ip = "", bits = "32"] = cidr.split("/");
  return { bytes: ip.split(".").map(Number), bits: Number(bits), label };
}

function v6(cidr: string, label: string): Range {
  const [ip = "", bits = "128"] = cidr.split("/");
  return { bytes: parseIpv6(ip) ?? [], bits: Number(bits), label };
}

/** IPv4 ranges refused by default (RFC 6890 special-purpose registry, minus nothing we would fetch from). */
const BLOCKED_V4: readonly Range[] = [
  v4("0.0.0.0/8", "unspecified (0.0.0.0/8)"),
  v4("10.0.0.0/8", "private (10.0.0.0/8)"),
  v4("100.64.0.0/10", "carrier-grade NAT (100.64.0.0/10)"),
  v4("127.0.0.0/8", "loopback (127.0.0.0/8)"),
  v4("169.254.0.0/16", "link-local and cloud metadata (169.254.0.0/16)"),
  v4("172.16.0.0/12", "private (172.16.0.0/12)"),
  v4("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
  v4("192.0.2.0/24", "documentation (192.0.2.0/24)"),
  v4("192.88.99.0/24", "6to4 relay anycast (192.88.99.0/24)"),
  v4("192.168.0.0/16", "private (192.168.0.0/16)"),
  v4("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
  v4("198.51.100.0/24", "documentation (198.51.100.0/24)"),
  v4("203.0.113.0/24", "documentation (203.0.113.0/24)"),
  v4("224.0.0.0/4", "multicast (224.0.0.0/4)"),
  v4("240.0.0.0/4", "reserved and broadcast (240.0.0.0/4)"),
];

/** IPv6 ranges refused by default. Ranges that embed an IPv4 address are handled in `embeddedIpv4`. */
const BLOCKED_V6: readonly Range[] = [
  v6("::/128", "unspecified (::)"),
  v6("::1/128", "loopback (::1)"),
  v6("100::/64", "discard-only (100::/64)"),
  v6("2001:db8::/32", "documentation (2001:db8::/32)"),
  v6("fc00::/7", "unique-local (fc00::/7)"),
  v6("fe80::/10", "link-local (fe80::/10)"),
  v6("fec0::/10", "site-local (fec0::/10)"),
  v6("ff00::/8", "multicast (ff00::/8)"),
];

function inRange(bytes: readonly number[], range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 16 bytes of an IPv6 address (with or without an embedded dotted quad), or undefined if malformed. */
export function parseIpv6(text: string): number[] | undefined {
  let ip = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (quad?.[1]) {
    const parts = quad[1].split(".").map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = parts;
    ip = `${ip.slice(0, -quad[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = ip.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const bytes: number[] = [];
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined;
    const value = Number.parseInt(group, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  return bytes;
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach an IPv4 host: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIpv4(bytes: readonly number[]): number[] | undefined {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12, 16);
  if (zeros(0, 12) && !zeros(12, 16)) return bytes.slice(12, 16);
  const nat64 = [0, 0x64, 0xff, 0x9b];
  if (nat64.every((b, i) => bytes[i] === b) && zeros(4, 12)) return bytes.slice(12, 16);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6);
  return undefined;
}

/**
 * Why `address` is not a public unicast address (a short label such as "loopback (127.0.0.0/8)"), or
 * undefined when it is public. Malformed input counts as refused. Pure; never throws.
 */
export function blockedReason(address: string): string | undefined {
  const family = isIP(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  if (family === 4) {
    const bytes = address.split(".").map(Number);
    return BLOCKED_V4.find((r) => inRange(bytes, r))?.label;
  }
  if (family !== 6) return "not an IP address";
  const bytes = parseIpv6(address);
  if (!bytes) return "not an IP address";
  const direct = BLOCKED_V6.find((r) => inRange(bytes, r))?.label;
  if (direct) return direct;
  const inner = embeddedIpv4(bytes);
  const reason = inner && BLOCKED_V4.find((r) => inRange(inner, r))?.label;
  return reason ? `${reason}, inside an IPv6 address` : undefined;
}

/**
 * `host` (a bind address, the name in a Host header, a URL's host) as WHATWG URL parsing canonicalizes
 * it, the way browsers and `fetch` read it: lowercase, IDN to punycode, every IPv4 spelling
 * (2130706433, 0177.0.0.1, 0x7f.1, 127.1, a trailing dot) to dotted decimal, IPv6 compressed in
 * brackets. A bare IPv6 address is taken as if bracketed. Undefined when `host` is not a host alone:
 * userinfo, a port, a path, percent-escapes, a zone id, white space. Pure; never throws.
 */
export function canonicalHost(host: string): string | undefined {
  const text = isIP(host) === 6 ? `[${host}]` : host;
  if (!text || /[@/?#\\%\s]/.test(text)) return undefined;
  // A colon outside brackets is a port (which URL parsing drops silently when it is the default).
  if (text.replace(/^\[[^\]]*\]/, "").includes(":")) return undefined;
  try {
    const url = new URL(`http://${text}/`);
    return url.port === "" && !url.username && !url.password ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `address` (an IP address, bracketed or not) is this machine's loopback: 127.0.0.0/8, ::1,
 * or 127.0.0.0/8 inside an IPv4-mapped IPv6 address (::ffff:127.0.0.1, which reaches the same socket).
 * NAT64 and 6to4 forms are not: they leave the machine. Exact dotted decimal only; see `isLoopbackHost`
 * for other spellings.
 */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 4) return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
  if (family !== 6 || bare.includes("%")) return false;
  const bytes = parseIpv6(bare);
  if (!bytes) return false;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zeros(0, 15) && bytes[15] === 1) return true;
  return zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff && bytes[12] === 127;
}

/**
 * True when `host` names this machine's loopback and nothing else: `localhost` (with or without the
 * trailing dot, any case) or a loopback address in any spelling URL parsing accepts (127.1,
 * 2130706433, [::1], ::ffff:127.0.0.1). `127.0.0.1.evil.com`, `localhost.evil.com`, userinfo, ports
 * and zone ids are not. Pure; never throws.
 */
export function isLoopbackHost(host: string): boolean {
  const name = canonicalHost(host);
  if (name === undefined) return false;
  return name === "localhost" || name === "localhost." || isLoopbackAddress(name);
}
