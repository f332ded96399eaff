/**
 * Turns a turn's input (text plus attachments) into the user message: the stored form (text, a note per
 * file, and the text of small documents) and the form sent to the model (image parts when the model has
 * vision). Each file is named by the path the model can open it at (its workspace copy, where the
 * composition root staged one). For a model that reads PDFs itself (`pdfDocuments`: Anthropic's
 * `document` blocks), a PDF goes to it as the file (a chat-completions `file` part with the PDF as a
 * base64 data URL) instead of its extracted text; the stored message keeps the text all the same.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { ChatCompletionContentPart } from "openai/resources/chat/completions";
import type { TurnInput } from "../core/turn.js";
import type { ChatMessage, InboundAttachment } from "../core/types.js";
import { extractDocument } from "./documents/index.js";
import type { ModelMessage } from "./model-client.js";

/** Options of {@link buildUserMessage}. */
export interface UserMessageOptions {
  /** Whether the model accepts images (they go inline as image parts). */
  vision: boolean;
  /** Where the model finds an attachment. @defaultValue its own path */
  pathFor?: ((attachment: InboundAttachment) => string) | undefined;
  /** Documents with at most this much text go inline; longer ones are left to `read_file`. @defaultValue 12_000 */
  inlineDocumentChars?: number | undefined;
  /**
   * Send PDFs as the file itself (up to {@link MAX_PDF_BYTES}), not their text: the model reads them
   * natively. @defaultValue false
   */
  pdfDocuments?: boolean | undefined;
  /** Speech to text for voice notes and audio files; without it they stay file notes. */
  transcribe?: ((attachment: InboundAttachment, signal?: AbortSignal) => Promise<string>) | undefined;
  signal?: AbortSignal | undefined;
}

/** The largest PDF sent as a file (Anthropic's request limit is 32 MB); a larger one goes as text. */
export const MAX_PDF_BYTES = 24 * 1024 * 1024;

function isPdf(a: InboundAttachment): boolean {
  return (
    a.kind === "document" &&
    (a.mimeType?.split(";")[0]?.trim() === "application/pdf" || /\.pdf$/i.test(a.fileName ?? a.path))
  );
}

/** `[attached file: report.pdf, application/pdf, /workspace/attachments/report.pdf]` */
export function attachmentNote(a: InboundAttachment, path: string = a.path): string {
  const name = a.fileName ?? basename(a.path);
  return `[attached ${a.kind === "image" ? "image" : "file"}: ${name}, ${a.mimeType ?? a.kind}, ${path}]`;
}

/** A voice note's or audio file's transcript, marked as such; a failure says so (the agent tells the user). */
async function transcriptText(a: InboundAttachment, options: UserMessageOptions): Promise<string> {
  if ((a.kind !== "voice" && a.kind !== "audio") || !options.transcribe) return "";
  try {
    const text = (await options.transcribe(a, options.signal)).trim();
    return text
      ? `[${a.kind === "voice" ? "voice note" : "audio"}, transcribed:] ${text}`
      : `[the ${a.kind} holds no speech]`;
  } catch (err) {
    if (options.signal?.aborted) throw err;
    return `[the ${a.kind === "voice" ? "voice note" : "audio"} could not be transcribed: ${(err as Error).message}]`;
  }
}

/**
 * The text a document attachment adds to the message: all of it when short, a pointer to `read_file`
 * when long, a notice for a PDF without a text layer; nothing for files that are not documents.
 */
async function documentText(
  a: InboundAttachment,
  path: string,
  options: UserMessageOptions,
): Promise<string> {
  if (a.kind !== "document") return "";
  const name = a.fileName ?? basename(a.path);
  const inline = options.inlineDocumentChars ?? 12_000;
  try {
    const doc = await extractDocument(a.path, {
      mimeType: a.mimeType,
      maxChars: inline,
      signal: options.signal,
    });
    if (doc.noTextLayer) return `[${name}: ${doc.notice ?? "no text could be read from it"}]`;
    if (!doc.truncated) return `[text of ${name} (${doc.kind}):]\n${doc.text}\n[end of ${name}]`;
    return `[${name} holds ${doc.totalChars} characters of text, too long to include: read it with read_file ${path}]`;
  } catch {
    // Not a document we can read (a binary, an archive): the note says where the file is.
    return "";
  }
}

/**
 * The user message in both forms. The stored message never holds file bytes (notes and document text
 * only); with `vision`, images are sent as base64 data URLs. An image that cannot be read is sent as its
 * note.
 */
export async function buildUserMessage(
  input: TurnInput,
  options: UserMessageOptions,
): Promise<{ stored: ChatMessage; forModel: ModelMessage }> {
  const attachments = input.attachments ?? [];
  const pathFor = options.pathFor ?? ((a: InboundAttachment) => a.path);
  const parts = await Promise.all(
    attachments.map(async (a) => ({
      note: attachmentNote(a, pathFor(a)),
      text: await documentText(a, pathFor(a), options),
      transcript: await transcriptText(a, options),
    })),
  );
  const notes = parts.map((p) => [p.note, p.text, p.transcript].filter(Boolean).join("\n"));
  const storedText = [input.text, ...notes].filter(Boolean).join("\n");
  const stored: ChatMessage = { role: "user", content: storedText };
  const images = options.vision ? attachments.filter((a) => a.kind === "image") : [];
  const pdfs = options.pdfDocuments ? attachments.filter(isPdf) : [];
  if (images.length === 0 && pdfs.length === 0) return { stored, forModel: stored };

  const imageParts: ChatCompletionContentPart[] = [];
  const fileParts = await Promise.all(pdfs.map((pdf) => pdfPart(pdf)));
  const textNotes: string[] = attachments.flatMap((a, i) => {
    if (images.includes(a)) return [];
    const p = parts[i]!;
    // A PDF sent as the file: its note (and transcript) without the extracted text.
    if (fileParts[pdfs.indexOf(a)]) return [[p.note, p.transcript].filter(Boolean).join("\n")];
    return [notes[i]!];
  });
  for (const image of images) {
    try {
      const bytes = await readFile(image.path);
      const mime = image.mimeType ?? "image/jpeg";
      imageParts.push({
        type: "image_url",
        image_url: { url: `data:${mime};base64,${bytes.toString("base64")}` },
      });
    } catch (err) {
      textNotes.push(
        `${attachmentNote(image, pathFor(image))} (could not be read: ${(err as Error).message})`,
      );
    }
  }
  const text = [input.text, ...textNotes].filter(Boolean).join("\n");
  const files = fileParts.filter((f): f is ChatCompletionContentPart => f !== undefined);
  return {
    stored,
    forModel: {
      role: "user",
      content: [...(text ? [{ type: "text" as const, text }] : []), ...imageParts, ...files],
    },
  };
}

/** A PDF as a `file` part; undefined when it is too large or cannot be read (its text goes instead). */
async function pdfPart(a: InboundAttachment): Promise<ChatCompletionContentPart | undefined> {
  try {
    const bytes = await readFile(a.path);
    if (bytes.length > MAX_PDF_BYTES || bytes.subarray(0, 5).toString("latin1") !== "%PDF-") return undefined;
    return {
      type: "file",
      file: {
        filename: a.fileName ?? basename(a.path),
        file_data: `data:application/pdf;base64,${bytes.toString("base64")}`,
      },
    };
  } catch {
    return undefined;
  }
}
