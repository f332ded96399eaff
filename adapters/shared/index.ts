/**
 * What several adapters share: the start/stop/status of an adapter and the first answers of its POST
 * webhook (`AdapterLifecycle`), streamed-reply previews edited in place (`ReplyStreams`), Markdown
 * splitting at a platform's limit, tables and lists for platforms without them, capped downloads and
 * outbound files, and button data longer than a platform allows.
 */
export { decodeButtonData, encodeButtonData } from "./button-data.js";
export type {
  ChatHistoryEntry,
  ChatPort,
  ChatSessionSummary,
  ChatStatus,
} from "./chat-port.js";
export { AdapterLifecycle } from "./lifecycle.js";
export {
  alignTable,
  type ColumnAlign,
  decodeCharacterRefs,
  plainTextList,
  tablesAsCode,
} from "./markdown.js";
export {
  attachmentKindOf,
  FileTooLargeError,
  megabytes,
  readOutboundFile,
  safeFileName,
  writeCapped,
} from "./media.js";
export {
  closeOpenMarkdown,
  type PreviewMessage,
  type PreviewPlatform,
  ReplyStreams,
  type ReplyStreamsOptions,
  type StreamMode,
  sameChunk,
  streamSetting,
} from "./reply-stream.js";
export { openFenceAtEnd, type SplitOptions, splitMarkdown, utf16Length } from "./split.js";
