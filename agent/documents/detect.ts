import type { DocumentKind } from "./types.js";

/** How many leading bytes the binary sniff looks at. */
export const SNIFF_BYTES = 8192;

const EXTENSION_KINDS: Record<string, DocumentKind> = {
  pdf: "pdf",
  docx: "docx",
  md: "markdown",
  markdown: "markdown",
  mdx: "markdown",
  csv: "csv",
  tsv: "csv",
  json: "json",
  jsonl: "json",
  ndjson: "json",
  html: "html",
  htm: "html",
  xml: "xml",
  svg: "xml",
  yaml: "yaml",
  yml: "yaml",
  txt: "text",
  log: "text",
  text: "text",
  rst: "text",
  ini: "text",
  cfg: "text",
  conf: "text",
  env: "text",
  toml: "code",
};

// Languages a model reads as source; anything else that sniffs as text is "text".
for (const ext of "ts tsx js jsx mjs cjs py rb go rs java kt c h cc cpp hpp cs php sh bash zsh sql swift scala lua pl r css scss vue svelte dockerfile makefile gradle tf".split(
  " ",
))
  EXTENSION_KINDS[ext] = "code";

const MIME_KINDS: Record<string, DocumentKind> = {
  "application/pdf": "pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/csv": "csv",
  "text/tab-separated-values": "csv",
  "application/json": "json",
  "application/x-ndjson": "json",
  "text/html": "html",
  "application/xhtml+xml": "html",
  "text/xml": "xml",
  "application/xml": "xml",
  "image/svg+xml": "xml",
  "application/yaml": "yaml",
  "text/yaml": "yaml",
  "application/x-yaml": "yaml",
  "text/plain": "text",
  "application/javascript": "code",
  "text/javascript": "code",
  "application/x-sh": "code",
};

/** Office formats we recognise but do not convert; the refusal names them. */
const UNSUPPORTED_OFFICE: Record<string, string> = {
  doc: "a legacy Word .doc file",
  xls: "an Excel .xls file",
  xlsx: "an Excel .xlsx file",
  ppt: "a PowerPoint .ppt file",
  pptx: "a PowerPoint .pptx file",
  odt: "an OpenDocument text file",
  rtf: "an RTF file",
};

/** The lowercase extension of a file name, without the dot ("" when none). */
export function extensionOf(fileName: string | undefined): string {
  if (!fileName) return "";
  const base = fileName.slice(fileName.lastIndexOf("/") + 1).toLowerCase();
  if (base === "dockerfile" || base === "makefile") return base;
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1) : "";
}

function startsWith(bytes: Uint8Array, ...magic: number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

function hasAscii(bytes: Uint8Array, text: string, from = 0): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(text, from, "latin1");
}

/** True when the bytes are a ZIP whose entries include `word/document.xml` (entry names are stored plain). */
function isDocxZip(bytes: Uint8Array): boolean {
  return startsWith(bytes, 0x50, 0x4b, 0x03, 0x04) && hasAscii(bytes, "word/document.xml");
}

/**
 * A guess at what a binary is from its first bytes ("PNG image", "ELF executable"), or undefined when
 * the magic number is not one we know. Used in refusals so the reader learns what the file is.
 */
export function guessBinaryType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, 0x89, 0x50, 0x4e, 0x47)) return "PNG image";
  if (startsWith(bytes, 0xff, 0xd8, 0xff)) return "JPEG image";
  if (startsWith(bytes, 0x47, 0x49, 0x46, 0x38)) return "GIF image";
  if (startsWith(bytes, 0x52, 0x49, 0x46, 0x46) && hasAscii(bytes.subarray(8, 12), "WEBP"))
    return "WebP image";
  if (startsWith(bytes, 0x52, 0x49, 0x46, 0x46) && hasAscii(bytes.subarray(8, 12), "WAVE"))
    return "WAV audio";
  if (startsWith(bytes, 0x25, 0x50, 0x44, 0x46)) return "PDF document";
  if (startsWith(bytes, 0x50, 0x4b, 0x03, 0x04)) return isDocxZip(bytes) ? "Word document" : "ZIP archive";
  if (startsWith(bytes, 0x1f, 0x8b)) return "gzip archive";
  if (startsWith(bytes, 0x42, 0x5a, 0x68)) return "bzip2 archive";
  if (startsWith(bytes, 0xfd, 0x37, 0x7a, 0x58, 0x5a)) return "xz archive";
  if (startsWith(bytes, 0x37, 0x7a, 0xbc, 0xaf)) return "7-Zip archive";
  if (startsWith(bytes, 0x7f, 0x45, 0x4c, 0x46)) return "ELF executable";
  if (startsWith(bytes, 0x4d, 0x5a)) return "Windows executable";
  if (startsWith(bytes, 0xcf, 0xfa, 0xed, 0xfe) || startsWith(bytes, 0xca, 0xfe, 0xba, 0xbe))
    return "Mach-O executable";
  if (startsWith(bytes, 0x00, 0x61, 0x73, 0x6d)) return "WebAssembly module";
  if (hasAscii(bytes.subarray(0, 16), "SQLite format 3")) return "SQLite database";
  if (startsWith(bytes, 0x49, 0x44, 0x33) || startsWith(bytes, 0xff, 0xfb)) return "MP3 audio";
  if (startsWith(bytes, 0x4f, 0x67, 0x67, 0x53)) return "Ogg audio";
  if (hasAscii(bytes.subarray(4, 8), "ftyp")) return "MP4/QuickTime video";
  if (startsWith(bytes, 0xd0, 0xcf, 0x11, 0xe0)) return "legacy Office document";
  return undefined;
}

/** The byte-order mark's encoding, when the bytes start with one. */
export function bomEncoding(bytes: Uint8Array): "utf-8" | "utf-16le" | "utf-16be" | undefined {
  if (startsWith(bytes, 0xef, 0xbb, 0xbf)) return "utf-8";
  if (startsWith(bytes, 0xff, 0xfe)) return "utf-16le";
  if (startsWith(bytes, 0xfe, 0xff)) return "utf-16be";
  return undefined;
}

/**
 * True when the bytes look binary: a NUL byte, more than 10% of invalid UTF-8 sequences, or more than
 * 10% of control characters other than whitespace and ESC, in the first `SNIFF_BYTES`. UTF-16 text with
 * a byte-order mark counts as text.
 */
export function isBinary(bytes: Uint8Array): boolean {
  const enc = bomEncoding(bytes);
  if (enc === "utf-16le" || enc === "utf-16be") return false;
  let sample = bytes.subarray(0, SNIFF_BYTES);
  if (sample.length === 0) return false;
  if (sample.includes(0)) return true;
  // A multi-byte character cut by the sample's end is not an invalid sequence: drop its lead bytes.
  if (bytes.length > sample.length) {
    let cut = sample.length;
    while (cut > sample.length - 4 && cut > 0 && ((sample[cut - 1] ?? 0) & 0xc0) === 0x80) cut--;
    if (cut > 0 && (sample[cut - 1] ?? 0) >= 0xc0) cut--;
    sample = sample.subarray(0, cut);
  }
  const text = new TextDecoder("utf-8").decode(sample);
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0xfffd || (c < 0x20 && c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 27 && c !== 8))
      bad++;
  }
  return bad / Math.max(1, text.length) > 0.1;
}

/** What `sniffDocument` concluded. */
export type SniffResult =
  | { type: "document"; kind: DocumentKind }
  | { type: "binary"; typeGuess: string | undefined }
  | { type: "unsupported"; description: string };

/**
 * Decides how to read a document from its leading bytes, its file name and its declared media type.
 * The bytes win: a `.txt` that starts with `%PDF-` is a PDF, a `.md` full of NUL bytes is binary.
 * @param head the first bytes of the document (at least `SNIFF_BYTES` when it is that long)
 */
export function sniffDocument(
  head: Uint8Array,
  hints: { fileName?: string; mimeType?: string } = {},
): SniffResult {
  if (startsWith(head, 0x25, 0x50, 0x44, 0x46, 0x2d)) return { type: "document", kind: "pdf" };
  if (isDocxZip(head)) return { type: "document", kind: "docx" };
  const ext = extensionOf(hints.fileName);
  const mime = hints.mimeType?.split(";")[0]?.trim().toLowerCase() ?? "";
  // `word/document.xml` may sit past the sniffed head (after big images): a ZIP named or typed as DOCX
  // goes to the converter, which says whether it is one.
  if (startsWith(head, 0x50, 0x4b, 0x03, 0x04) && (ext === "docx" || MIME_KINDS[mime] === "docx"))
    return { type: "document", kind: "docx" };
  const office = UNSUPPORTED_OFFICE[ext];
  if (office && (isBinary(head) || ext === "rtf")) return { type: "unsupported", description: office };
  if (isBinary(head)) return { type: "binary", typeGuess: guessBinaryType(head) };
  const byExt = EXTENSION_KINDS[ext];
  // A binary-looking declared type (a .docx that is not a ZIP, a mislabelled PDF) with text bytes is text.
  if (byExt && byExt !== "pdf" && byExt !== "docx") return { type: "document", kind: byExt };
  const byMime = MIME_KINDS[mime];
  if (byMime && byMime !== "pdf" && byMime !== "docx") return { type: "document", kind: byMime };
  return { type: "document", kind: "text" };
}
