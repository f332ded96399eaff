import { HeraldError } from "../../../core/errors.js";
import {
  bomEncoding,
  extractDocumentFromBuffer,
  formatBytes,
  SNIFF_BYTES,
  sniffDocument,
} from "../../documents/index.js";
import { displayPath, fileChunks, formatCount, readUpTo, statPath } from "./common.js";
import { pageFooter, pageLines, type TextChunks, type TextEncodingName } from "./pager.js";
import { parseArgs, type ReadFileArgs, readFileArgsSchema } from "./schemas.js";
import type { FileScope, FileToolOptions } from "./types.js";

/** Page and output limits of `readFile`. */
export interface ReadFileOptions extends FileToolOptions {
  /** Lines per page when the model gives no `limit`. @defaultValue 2000 */
  defaultLimit?: number;
  /** Characters kept of each line. @defaultValue 2000 */
  maxLineChars?: number;
  /** Characters of numbered output per call; the page stops early past it. @defaultValue 100_000 */
  maxOutputChars?: number;
}

const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

/**
 * Reads a file for the model, `cat -n` style: each line numbered (right-aligned, then a tab), at most
 * `limit` lines from `offset`, long lines cut with a marker, and a last line giving the total and the
 * offset of the next page. PDF and DOCX files are shown as their extracted text, paged the same way.
 * @throws ToolArgsError for bad arguments; HeraldError `not_found` (missing file), `invalid_input`
 *   (a directory, a binary file, an offset past the end), or what `scope.resolve` throws.
 */
export async function readFile(
  scope: FileScope,
  args: ReadFileArgs,
  options: ReadFileOptions = {},
): Promise<string> {
  const parsed = parseArgs(readFileArgsSchema, args, "read_file");
  const { defaultLimit = 2000, maxLineChars = 2000, maxOutputChars = 100_000, signal } = options;
  const offset = parsed.offset ?? 1;
  const limits = { offset, limit: parsed.limit ?? defaultLimit, maxLineChars, maxOutputChars };
  const rel = scope.resolve(parsed.path);
  const shown = displayPath(rel);
  const info = await statPath(scope, rel, "; search_files finds files by name");
  if (info.kind === "directory")
    throw new HeraldError(`${shown} is a directory; use search_files to list its files`, {
      code: "invalid_input",
    });
  signal?.throwIfAborted();
  const head = await scope.files.read(rel, { offset: 0, length: SNIFF_BYTES });
  const sniff = sniffDocument(head, { fileName: rel });
  if (sniff.type === "binary")
    throw new HeraldError(
      `${shown} is a binary file (${sniff.typeGuess ?? "unknown type"}, ${formatBytes(info.sizeBytes)}); read_file shows text only`,
      { code: "invalid_input" },
    );
  if (sniff.type === "unsupported")
    throw new HeraldError(
      `${shown} is ${sniff.description}, which read_file cannot show; convert it to PDF, DOCX or text`,
      {
        code: "invalid_input",
      },
    );

  let header = "";
  let chunks: TextChunks;
  let encoding: TextEncodingName = "utf-8";
  if (sniff.kind === "pdf" || sniff.kind === "docx") {
    const bytes =
      info.sizeBytes > MAX_DOCUMENT_BYTES
        ? undefined
        : await readUpTo(scope, rel, MAX_DOCUMENT_BYTES, signal);
    if (!bytes || bytes.length > MAX_DOCUMENT_BYTES)
      throw new HeraldError(
        `${shown} is a ${formatBytes(Math.max(info.sizeBytes, bytes?.length ?? 0))} ${sniff.kind.toUpperCase()}, over the ${formatBytes(MAX_DOCUMENT_BYTES)} read_file extracts`,
        { code: "invalid_input" },
      );
    // From bytes, so refusals name the file as the model knows it (workspace-relative).
    const doc = await extractDocumentFromBuffer(bytes, {
      fileName: shown,
      signal,
    });
    const pages = doc.pages !== undefined ? `, ${formatCount(doc.pages)} pages` : "";
    if (doc.noTextLayer) return `${shown} (${doc.kind.toUpperCase()}${pages}): ${doc.notice}`;
    header = `${shown} (${doc.kind.toUpperCase()}${pages}; extracted text${doc.truncated ? ", cut" : ""}${doc.notice ? `; ${doc.notice}` : ""})\n`;
    chunks = [doc.text];
  } else {
    if (info.sizeBytes === 0) return `${shown} is empty (0 bytes)`;
    // Streamed: the pager holds one chunk and the page, whatever the file's size or its longest line.
    const bom = bomEncoding(head);
    if (bom) encoding = bom;
    chunks = fileChunks(scope, rel, signal);
  }
  const page = await pageLines(chunks, limits, { encoding, signal });
  if (page.totalLines === 0) return `${header}${shown} has no text`;
  if (offset > page.totalLines)
    throw new HeraldError(
      `offset ${offset} is past the end: ${shown} has ${formatCount(page.totalLines)} lines`,
      {
        code: "invalid_input",
      },
    );
  return `${header}${page.body}\n${pageFooter(page, offset, maxOutputChars)}`;
}
