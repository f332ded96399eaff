/**
 * Replies for IRC: plain text, one PRIVMSG per line, each line within IRC's 512 bytes including the
 * prefix the server puts in front when it relays it (`:nick!user@host PRIVMSG #chan :` and CRLF).
 * Lines are split on word boundaries by UTF-8 bytes, never inside a character; blank lines are dropped
 * (IRC cannot send an empty message).
 */

/** An IRC line's limit, CRLF included (RFC 1459). */
export const IRC_LINE_BYTES = 512;

/** The most text one line carries even on a short prefix, so lines read evenly. */
export const IRC_MAX_TEXT_BYTES = 400;

/** Longest host name assumed before the server told the bot its own (RFC 1035 labels). */
const ASSUMED_HOST_BYTES = 63;

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Text bytes one PRIVMSG to `target` may carry when relayed as from `nick!user@host`. */
export function textBudget(target: string, me: { nick: string; username?: string; host?: string }): number {
  const user = me.username || "~herald";
  const hostBytes = me.host ? bytes(me.host) : ASSUMED_HOST_BYTES;
  const prefix = 1 + bytes(me.nick) + 1 + bytes(user) + 1 + hostBytes + 1;
  const command = bytes(`PRIVMSG ${target} :`);
  return Math.min(IRC_MAX_TEXT_BYTES, IRC_LINE_BYTES - 2 - prefix - command);
}

/** Markdown → plain text: heading hashes, emphasis markers and link syntax dropped; fences removed. */
export function plainText(markdown: string): string {
  return markdown
    .split("\n")
    .filter((line) => !/^ {0,3}(```|~~~)/.test(line))
    .map((line) =>
      line
        .replace(/^#{1,6}\s+/, "")
        .replace(/\*\*(.+?)\*\*|__(.+?)__/g, "$1$2")
        .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
          label === href ? href : `${label} (${href})`,
        ),
    )
    .join("\n");
}

/** Cuts `line` into pieces of at most `maxBytes`, at spaces where possible. */
export function splitLine(line: string, maxBytes: number): string[] {
  const out: string[] = [];
  let rest = line.trim();
  while (bytes(rest) > maxBytes) {
    // The longest prefix within the budget, by code points.
    let cut = 0;
    let size = 0;
    for (const ch of rest) {
      const b = bytes(ch);
      if (size + b > maxBytes) break;
      size += b;
      cut += ch.length;
    }
    const space = rest.lastIndexOf(" ", cut);
    const at = space > 0 ? space : cut;
    out.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  if (rest) out.push(rest);
  return out;
}

/** The lines one reply becomes, each within `maxBytes`. */
export function ircLines(markdown: string, maxBytes: number): string[] {
  return plainText(markdown)
    .split(/\r?\n/)
    .flatMap((line) => splitLine(line.replace(/[\r\n\0]/g, " "), maxBytes));
}
