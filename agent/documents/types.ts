import type { HeraldErrorCode } from "../../core/errors.js";
import { HeraldError } from "../../core/errors.js";

/** What a document was read as. `code` is source text in a programming or config language. */
export type DocumentKind =
  | "pdf"
  | "docx"
  | "text"
  | "markdown"
  | "csv"
  | "json"
  | "html"
  | "xml"
  | "yaml"
  | "code";

/** The text of one document. */
export interface ExtractedDocument {
  kind: DocumentKind;
  /** The text, cut at `maxChars` when `truncated`. Empty when a PDF has no text layer. */
  text: string;
  /** Page count (PDF only). */
  pages?: number;
  /** True when `text` stops at `maxChars`; `totalChars` then says how long the whole text was (or at least). */
  truncated: boolean;
  /** Characters of text the document yielded before any cut (PDF: of the pages read). */
  totalChars: number;
  /** PDF only: no page yielded any text, so it is most likely scanned images. */
  noTextLayer?: boolean;
  /** One line for the reader when something about the text needs saying (no text layer, converter warnings). */
  notice?: string;
}

/** Options of `extractDocument` and `extractDocumentFromBuffer`. */
export interface ExtractOptions {
  /** The declared media type (HTTP `Content-Type`, attachment type); parameters such as `charset` are ignored. */
  mimeType?: string;
  /** Cut the text after this many characters. @defaultValue 2_000_000 */
  maxChars?: number;
  /** Refuse inputs larger than this. @defaultValue 50 MiB */
  maxBytes?: number;
  /** Stops the extraction between pages (PDF) or before conversion; rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Why a document was refused. */
export type RefusalReason = "binary" | "unsupported" | "too_large" | "corrupt";

/**
 * A document Herald will not or cannot turn into text: a binary (image, archive, executable), an
 * unsupported office format, an input over `maxBytes`, or a file its converter could not parse.
 * The message says what the file looks like and what to do instead.
 */
export class DocumentRefusedError extends HeraldError {
  readonly reason: RefusalReason;
  /** A guess at the real type ("PNG image", "ZIP archive"), when the bytes said. */
  readonly typeGuess: string | undefined;
  readonly sizeBytes: number;

  constructor(
    message: string,
    options: { reason: RefusalReason; sizeBytes: number; typeGuess?: string; cause?: unknown },
  ) {
    const code: HeraldErrorCode = "invalid_input";
    super(message, { code, cause: options.cause });
    this.name = "DocumentRefusedError";
    this.reason = options.reason;
    this.typeGuess = options.typeGuess;
    this.sizeBytes = options.sizeBytes;
  }
}
