/** Text out of documents: PDF, DOCX and text-like files, with a clear refusal for everything else. */
export {
  bomEncoding,
  extensionOf,
  guessBinaryType,
  isBinary,
  SNIFF_BYTES,
  type SniffResult,
  sniffDocument,
} from "./detect.js";
export {
  decodeText,
  extractDocument,
  extractDocumentFromBuffer,
  formatBytes,
  NO_TEXT_LAYER_NOTICE,
} from "./extract.js";
export {
  type DocumentKind,
  DocumentRefusedError,
  type ExtractedDocument,
  type ExtractOptions,
  type RefusalReason,
} from "./types.js";
