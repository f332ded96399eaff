/**
 * An IRC PRIVMSG → `InboundMessage`. A channel message is `irc:#channel`, a private one `irc:<nick>`
 * (replies go back to the nick). The sender is identified by the full hostmask `nick!user@host` (a nick
 * alone can be taken by anyone), or by the services account where the server tags it (`account:<name>`).
 * In channels the bot is addressed by `<nick>: …`, `<nick>, …` or its nick as a word.
 */
import type { InboundMessage } from "../../core/types.js";
import type { IrcMessageEvent } from "./types.js";

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The message, or undefined for what Herald ignores (notices, server messages, its own, empty). */
export function parseMessage(
  event: IrcMessageEvent,
  myNick: string,
  messageId: string,
): InboundMessage | undefined {
  if (event.type !== "privmsg" && event.type !== "action") return undefined;
  if (event.from_server || !event.nick || event.nick.toLowerCase() === myNick.toLowerCase()) return undefined;
  const isChannel = /^[#&+!]/.test(event.target);
  const text = event.message.trim();
  if (!text) return undefined;
  const nick = escapeRegex(myNick);
  const prefix = new RegExp(`^@?${nick}[:,]\\s*`, "i");
  const word = new RegExp(
    `(^|[^A-Za-z0-9_\\-\\[\\]\\\\\`^{|}])@?${nick}($|[^A-Za-z0-9_\\-\\[\\]\\\\\`^{|}])`,
    "i",
  );
  const addressed = !isChannel || prefix.test(text) || word.test(text);
  const id = event.account ? `account:${event.account}` : `${event.nick}!${event.ident}@${event.hostname}`;
  return {
    platform: "irc",
    messageId,
    chat: { platform: "irc", chatId: isChannel ? event.target.toLowerCase() : event.nick },
    chatType: isChannel ? "group" : "dm",
    sender: { id, name: event.nick },
    text: isChannel ? text.replace(prefix, "") : text,
    mentioned: addressed,
    sentAt: event.time ?? Date.now(),
    // In a channel the reply names the asker (`alice: …`), as people do on IRC.
    meta: isChannel ? { nick: event.nick } : undefined,
  };
}
