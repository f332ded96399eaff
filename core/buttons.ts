/**
 * Buttons under a message, for platforms without them: the same choices as plain text. Commands are
 * listed as what to reply (`Reply /approve or /deny.`), unless the text already names them; other
 * choices are numbered. So a typed answer works everywhere a click does.
 */
import type { OutboundButton, OutboundMessage } from "./types.js";

/**
 * The text a platform without buttons shows instead of `buttons` under `text`; empty when there are
 * none, or when every button is a command whose name `text` already mentions.
 */
export function buttonsFallback(
  buttons: readonly (readonly OutboundButton[])[] | undefined,
  text = "",
): string {
  const all = (buttons ?? []).flat();
  if (all.length === 0) return "";
  if (all.every((b) => b.data.startsWith("/"))) {
    const commands = [...new Set(all.map((b) => b.data.split(/\s/)[0]!))].filter((c) => !text.includes(c));
    if (commands.length === 0) return "";
    const last = commands.pop()!;
    return `Reply ${commands.length > 0 ? `${commands.join(", ")} or ${last}` : last}.`;
  }
  return [...all.map((b, i) => `${i + 1}. ${b.label}`), "(Reply with your choice.)"].join("\n");
}

/** `message` as a platform without buttons gets it: the fallback appended to the text, no buttons. */
export function withButtonsFallback<M extends Pick<OutboundMessage, "text" | "buttons">>(message: M): M {
  if (!message.buttons?.length) return message;
  const fallback = buttonsFallback(message.buttons, message.text);
  const { buttons: _, ...rest } = message;
  return { ...rest, text: fallback ? `${message.text}\n\n${fallback}` : message.text } as M;
}
