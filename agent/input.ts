/**
 * Turns a turn's input (text plus attachments) into the user message: the stored form (text with a
 * note per file) and the form sent to the model (image parts when the model has vision).
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { ChatCompletionContentPart } from "openai/resources/chat/completions";
import type { TurnInput } from "../core/turn.js";
import type { ChatMessage, InboundAttachment } from "../core/types.js";
import type { ModelMessage } from "./model-client.js";

/** `[attached file: report.pdf, application/pdf, /home/…/cache/report.pdf]` */
export function attachmentNote(a: InboundAttachment): string {
  const name = a.fileName ?? basename(a.path);
  return `[attached ${a.kind === "image" ? "image" : "file"}: ${name}, ${a.mimeType ?? a.kind}, ${a.path}]`;
}

/**
 * The user message in both forms. The stored message never holds file bytes (only notes); with
 * `vision`, images are sent as base64 data URLs. An image that cannot be read is sent as its note.
 */
export async function buildUserMessage(
  input: TurnInput,
  vision: boolean,
): Promise<{ stored: ChatMessage; forModel: ModelMessage }> {
  const attachments = input.attachments ?? [];
  const notes = attachments.map(attachmentNote);
  const storedText = [input.text, ...notes].filter(Boolean).join("\n");
  const stored: ChatMessage = { role: "user", content: storedText };
  const images = vision ? attachments.filter((a) => a.kind === "image") : [];
  if (images.length === 0) return { stored, forModel: stored };

  const imageParts: ChatCompletionContentPart[] = [];
  const textNotes: string[] = attachments.filter((a) => !images.includes(a)).map(attachmentNote);
  for (const image of images) {
    try {
      const bytes = await readFile(image.path);
      const mime = image.mimeType ?? "image/jpeg";
      imageParts.push({
        type: "image_url",
        image_url: { url: `data:${mime};base64,${bytes.toString("base64")}` },
      });
    } catch (err) {
      textNotes.push(`${attachmentNote(image)} (could not be read: ${(err as Error).message})`);
    }
  }
  const text = [input.text, ...textNotes].filter(Boolean).join("\n");
  return {
    stored,
    forModel: { role: "user", content: [...(text ? [{ type: "text" as const, text }] : []), ...imageParts] },
  };
}
