/**
 * Real-shaped Baileys messages from `tests/fixtures/whatsapp/` (scrubbed numbers and media URLs), with
 * helpers to vary the id and text.
 */
import { readFileSync } from "node:fs";
import { BufferJSON, type WAMessage } from "@whiskeysockets/baileys";

const dir = new URL("../../fixtures/whatsapp/", import.meta.url);

/** A fresh copy of fixture `name` (e.g. `dm-text`, `group-mention`). */
export function fixture(name: string): WAMessage {
  return JSON.parse(readFileSync(new URL(`${name}.json`, dir), "utf8"), BufferJSON.reviver) as WAMessage;
}

/** The message with another id (a new message with the same content). */
export function withId(message: WAMessage, id: string): WAMessage {
  return { ...message, key: { ...message.key, id } };
}

/** The message with another text, in whichever field the fixture uses. */
export function withText(message: WAMessage, text: string): WAMessage {
  const m = structuredClone(message.message ?? {});
  if (m.extendedTextMessage) m.extendedTextMessage.text = text;
  else m.conversation = text;
  return { ...message, message: m };
}
