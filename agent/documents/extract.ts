import { readFile, stat } from "node:fs/promises";
import { HeraldError } from "../../core/errors.js";
import { ConversionStoppedError, convertInChild } from "./convert-process.js";
import { bomEncoding, sniffDocument } from "./detect.js";
import { DocumentRefusedError, type ExtractedDocument, type ExtractOptions } from "./types.js";

const DEFAULT_MAX_CHARS = 2_000_000;
const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

/** The notice of a PDF without text. */
export const NO_TEXT_LAYER_NOTICE = "this PDF has no text layer (a scan?); OCR it or ask for a text version";

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function cut(text: string, maxChars: number): { text: string; truncated: boolean } {
  return text.length > maxChars
    ? { text: text.slice(0, maxChars), truncated: true }
    : { text, truncated: false };
}

/** Decodes text bytes: a BOM picks UTF-16 or is dropped; otherwise UTF-8 with U+FFFD for bad sequences. */
export function decodeText(bytes: Uint8Array): string {
  const enc = bomEncoding(bytes);
  // TextDecoder drops a leading BOM of its own encoding by default.
  return new TextDecoder(enc ?? "utf-8").decode(bytes);
}

/**
 * Extracts the text of a document held in memory (a download, an attachment).
 * PDF through unpdf, DOCX through mammoth (raw text), each in a child process of bounded memory and
 * time (`convert-process.ts`); text-like types decoded as UTF-8.
 * @param options.fileName a name for the extension hint and for messages
 * @throws DocumentRefusedError for binaries, unsupported formats, inputs over `maxBytes` and files the
 *   converter could not parse; the signal's reason when aborted.
 */
export async function extractDocumentFromBuffer(
  bytes: Uint8Array,
  options: ExtractOptions & { fileName?: string } = {},
): Promise<ExtractedDocument> {
  const { maxChars = DEFAULT_MAX_CHARS, maxBytes = DEFAULT_MAX_BYTES, signal } = options;
  const label = options.fileName ?? "the document";
  signal?.throwIfAborted();
  if (bytes.byteLength > maxBytes)
    throw new DocumentRefusedError(
      `${label} is ${formatBytes(bytes.byteLength)}, over the ${formatBytes(maxBytes)} limit for documents`,
      { reason: "too_large", sizeBytes: bytes.byteLength },
    );
  const sniff = sniffDocument(bytes, options);
  if (sniff.type === "binary")
    throw new DocumentRefusedError(
      `${label} is a binary file (${sniff.typeGuess ?? "unknown type"}, ${formatBytes(bytes.byteLength)}), not text`,
      { reason: "binary", sizeBytes: bytes.byteLength, typeGuess: sniff.typeGuess },
    );
  if (sniff.type === "unsupported")
    throw new DocumentRefusedError(
      `${label} is ${sniff.description}, which Herald cannot read; save it as PDF, DOCX or plain text`,
      { reason: "unsupported", sizeBytes: bytes.byteLength, typeGuess: sniff.description },
    );
  const { kind } = sniff;
  try {
    if (kind === "pdf" || kind === "docx") {
      const answer = await convertInChild(kind, bytes, maxChars, { signal });
      if (!answer.ok) throw new Error(answer.message);
      if (answer.kind === "pdf") {
        const pdf = answer;
        const pages = pdf.pageTexts.map((t, i) =>
          pdf.pageCount > 1 ? `--- page ${i + 1} of ${pdf.pageCount} ---\n${t}` : t,
        );
        const hasText = pdf.pageTexts.some((t) => t.length > 0);
        if (!hasText && !pdf.stoppedEarly)
          return {
            kind,
            text: "",
            pages: pdf.pageCount,
            truncated: false,
            totalChars: 0,
            noTextLayer: true,
            notice: NO_TEXT_LAYER_NOTICE,
          };
        const full = pages.join("\n\n");
        const out = cut(full, maxChars);
        return {
          kind,
          ...out,
          truncated: out.truncated || pdf.stoppedEarly,
          pages: pdf.pageCount,
          totalChars: full.length,
        };
      }
      const { warnings } = answer;
      const out = cut(answer.text, maxChars);
      const notice =
        warnings.length > 0 ? `converter warnings: ${warnings.slice(0, 3).join("; ")}` : undefined;
      return { kind, ...out, totalChars: answer.totalChars, ...(notice ? { notice } : {}) };
    }
    const text = decodeText(bytes);
    return { kind, ...cut(text, maxChars), totalChars: text.length };
  } catch (err) {
    if (err instanceof HeraldError || signal?.aborted) throw err;
    if (err instanceof ConversionStoppedError)
      throw new DocumentRefusedError(
        `${label} could not be read as ${kind.toUpperCase()}: ${err.message} (a file that unpacks to far more than its size, or a very complex one); Herald stopped reading it. Ask for a smaller or simpler file`,
        {
          reason: err.why === "crashed" ? "corrupt" : "too_large",
          sizeBytes: bytes.byteLength,
          typeGuess: kind,
          cause: err,
        },
      );
    throw new DocumentRefusedError(
      `${label} looks like a ${kind.toUpperCase()} file but could not be read: ${err instanceof Error ? err.message : String(err)}`,
      {
        reason: "corrupt",
        sizeBytes: bytes.byteLength,
        typeGuess: kind,
        cause: err,
      },
    );
  }
}

/**
 * Extracts the text of a file on disk; see `extractDocumentFromBuffer`. The size is checked before
 * the file is read.
 * @throws HeraldError `not_found` when the file does not exist or is a directory; DocumentRefusedError as above.
 */
export async function extractDocument(
  path: string,
  options: ExtractOptions = {},
): Promise<ExtractedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  options.signal?.throwIfAborted();
  const info = await stat(path).catch((err: unknown) => {
    throw new HeraldError(`${path} does not exist or cannot be read`, { code: "not_found", cause: err });
  });
  if (!info.isFile()) throw new HeraldError(`${path} is not a regular file`, { code: "not_found" });
  if (info.size > maxBytes)
    throw new DocumentRefusedError(
      `${path} is ${formatBytes(info.size)}, over the ${formatBytes(maxBytes)} limit for documents`,
      {
        reason: "too_large",
        sizeBytes: info.size,
      },
    );
  const bytes = await readFile(path, { signal: options.signal });
  return extractDocumentFromBuffer(bytes, { ...options, fileName: path });
}

export { formatBytes };
