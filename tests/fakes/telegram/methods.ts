/**
 * The Bot API methods the fake serves (all but `getUpdates`, which needs the server's long poll), with
 * the real API's checks and error texts for what Herald's adapter can get wrong.
 */
import { parseTelegramHtml } from "./html.js";
import type { FakeStore } from "./store.js";
import type { FakeUpload, StoredMessage } from "./types.js";

export type MethodResult = { status: 200; result: unknown } | { status: number; description: string };

const ok = (result: unknown): MethodResult => ({ status: 200, result });
const bad = (description: string): MethodResult => ({
  status: 400,
  description: `Bad Request: ${description}`,
});

/** Visible text and entities of a text + parse mode, or the API's error. */
function render(
  text: unknown,
  parseMode: unknown,
  maxLength: number,
  what: "message text" | "caption",
): { text: string; entities?: unknown[] } | MethodResult {
  if (typeof text !== "string") return bad(`${what} is empty`);
  let visible = text;
  let entities: unknown[] | undefined;
  if (parseMode === "HTML") {
    const parsed = parseTelegramHtml(text);
    if (!parsed.ok) return { status: 400, description: parsed.error };
    visible = parsed.text;
    if (parsed.entities.length > 0) entities = parsed.entities;
  } else if (parseMode !== undefined) {
    return bad(`unsupported parse_mode ${String(parseMode)} in this fake`);
  }
  if (what === "message text" && visible.trim().length === 0) return bad("message text is empty");
  if (visible.length > maxLength)
    return bad(what === "caption" ? "message caption is too long" : "message is too long");
  return entities ? { text: visible, entities } : { text: visible };
}

const isResult = (v: unknown): v is MethodResult =>
  typeof v === "object" &&
  v !== null &&
  "status" in v &&
  typeof (v as { status: unknown }).status === "number";

/** Thread, reply and formatting fields every send shares. */
function common(store: FakeStore, params: Record<string, unknown>): Partial<StoredMessage> | MethodResult {
  const chatId = params["chat_id"];
  const fields: Partial<StoredMessage> = { from: store.bot };
  const thread = params["message_thread_id"];
  if (thread !== undefined && thread !== null) {
    const root = store.find(String(chatId), Number(thread));
    if (!root?.["forum_topic_created"]) return bad("message thread not found");
    fields.message_thread_id = Number(thread);
    fields.is_topic_message = true;
  }
  const reply = params["reply_parameters"] as
    | { message_id?: number; allow_sending_without_reply?: boolean }
    | undefined;
  if (reply?.message_id !== undefined) {
    const target = store.find(String(chatId), Number(reply.message_id));
    if (target) fields.reply_to_message = { ...target, reply_to_message: undefined };
    else if (!reply.allow_sending_without_reply) return bad("message to be replied not found");
  }
  return fields;
}

function requireChat(params: Record<string, unknown>): MethodResult | undefined {
  const chatId = params["chat_id"];
  if (chatId === undefined || chatId === "" || Number.isNaN(Number(chatId))) return bad("chat not found");
  return undefined;
}

function sendMessage(store: FakeStore, params: Record<string, unknown>): MethodResult {
  const missing = requireChat(params);
  if (missing) return missing;
  const body = render(params["text"], params["parse_mode"], 4096, "message text");
  if (isResult(body)) return body;
  const fields = common(store, params);
  if (isResult(fields)) return fields;
  const keyboard = inlineKeyboard(params["reply_markup"]);
  if (isResult(keyboard)) return keyboard;
  const message = store.add(String(params["chat_id"]), {
    ...fields,
    ...body,
    ...(keyboard ? { reply_markup: keyboard } : {}),
    formatted: params["parse_mode"] !== undefined,
  });
  return ok(message);
}

/** An inline keyboard as the API checks it (callback_data of 1-64 bytes), undefined when absent. */
function inlineKeyboard(markup: unknown): { inline_keyboard: unknown[][] } | MethodResult | undefined {
  if (markup === undefined) return undefined;
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (!Array.isArray(rows)) return bad("can't parse reply keyboard markup JSON object");
  for (const row of rows) {
    if (!Array.isArray(row))
      return bad("can't parse inline keyboard button: InlineKeyboardButton must be an Object");
    for (const button of row as { text?: unknown; callback_data?: unknown }[]) {
      if (typeof button.text !== "string" || !button.text)
        return bad("text buttons are unallowed in the inline keyboard");
      const data = button.callback_data;
      if (typeof data !== "string" || Buffer.byteLength(data) < 1 || Buffer.byteLength(data) > 64)
        return bad("BUTTON_DATA_INVALID");
    }
  }
  return { inline_keyboard: rows as unknown[][] };
}

function editMessageText(store: FakeStore, params: Record<string, unknown>): MethodResult {
  const message = store.find(String(params["chat_id"]), Number(params["message_id"]));
  if (!message || message.deleted) return bad("message to edit not found");
  if (message.from?.id !== store.bot.id) return bad("message can't be edited");
  const body = render(params["text"], params["parse_mode"], 4096, "message text");
  if (isResult(body)) return body;
  // Entities given as such (no parse mode) are kept as they are.
  if (!body.entities && Array.isArray(params["entities"])) body.entities = params["entities"];
  // An edit without reply_markup removes the message's inline keyboard, as on Telegram.
  const keyboard = inlineKeyboard(params["reply_markup"]);
  if (isResult(keyboard)) return keyboard;
  const sameKeyboard = JSON.stringify(keyboard) === JSON.stringify(message["reply_markup"]);
  if (keyboard) message["reply_markup"] = keyboard;
  else delete message["reply_markup"];
  if (
    sameKeyboard &&
    body.text === message.text &&
    JSON.stringify(body.entities) === JSON.stringify(message.entities)
  ) {
    return bad(
      "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  }
  message.text = body.text;
  if (body.entities) message.entities = body.entities;
  else delete message.entities;
  message["edit_date"] = Math.floor(Date.now() / 1000);
  return ok(message);
}

function editMessageReplyMarkup(store: FakeStore, params: Record<string, unknown>): MethodResult {
  const message = store.find(String(params["chat_id"]), Number(params["message_id"]));
  if (!message || message.deleted) return bad("message to edit not found");
  const keyboard = inlineKeyboard(params["reply_markup"]);
  if (isResult(keyboard)) return keyboard;
  if (keyboard) message["reply_markup"] = keyboard;
  else delete message["reply_markup"];
  return ok(message);
}

function deleteMessage(store: FakeStore, params: Record<string, unknown>): MethodResult {
  const message = store.find(String(params["chat_id"]), Number(params["message_id"]));
  if (!message || message.deleted) return bad("message to delete not found");
  message.deleted = true;
  return ok(true);
}

function sendFile(
  store: FakeStore,
  kind: "photo" | "document" | "voice",
  params: Record<string, unknown>,
  files: Record<string, FakeUpload>,
): MethodResult {
  const missing = requireChat(params);
  if (missing) return missing;
  const ref = params[kind];
  const upload = typeof ref === "string" && ref.startsWith("attach://") ? files[ref.slice(9)] : undefined;
  if (!upload) return bad(`there is no ${kind} in the request`);
  if (upload.sizeBytes === 0) return bad("file must be non-empty");
  const caption =
    params["caption"] === undefined
      ? undefined
      : render(params["caption"], params["parse_mode"], 1024, "caption");
  if (caption && isResult(caption)) return caption;
  const fields = common(store, params);
  if (isResult(fields)) return fields;
  const stored = store.addFile(upload.content, `${kind}s/${upload.fileName}`);
  const media =
    kind === "photo"
      ? {
          photo: [
            {
              file_id: stored.file_id,
              file_unique_id: stored.file_unique_id,
              file_size: stored.file_size,
              width: 800,
              height: 600,
            },
          ],
        }
      : kind === "voice"
        ? {
            voice: {
              file_id: stored.file_id,
              file_unique_id: stored.file_unique_id,
              file_size: stored.file_size,
              duration: Number(params["duration"] ?? 0),
              mime_type: "audio/ogg",
            },
          }
        : {
            document: {
              file_id: stored.file_id,
              file_unique_id: stored.file_unique_id,
              file_size: stored.file_size,
              file_name: upload.fileName,
            },
          };
  const message = store.add(String(params["chat_id"]), {
    ...fields,
    ...media,
    ...(caption ? { caption: caption.text } : {}),
  });
  return ok(message);
}

/** Serves one method; undefined when the fake does not know it. */
export function callMethod(
  store: FakeStore,
  method: string,
  params: Record<string, unknown>,
  files: Record<string, FakeUpload>,
): MethodResult | undefined {
  switch (method) {
    case "getMe":
      return ok({
        ...store.bot,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
      });
    case "sendMessage":
      return sendMessage(store, params);
    case "editMessageText":
      return editMessageText(store, params);
    case "deleteMessage":
      return deleteMessage(store, params);
    case "editMessageReplyMarkup":
      return editMessageReplyMarkup(store, params);
    case "answerCallbackQuery":
      return params["callback_query_id"]
        ? ok(true)
        : bad("query is too old and response timeout expired or query ID is invalid");
    case "sendChatAction":
      return requireChat(params) ?? ok(true);
    case "setMyCommands": {
      const commands =
        typeof params["commands"] === "string" ? JSON.parse(params["commands"]) : params["commands"];
      if (!Array.isArray(commands)) return bad("commands must be an array");
      for (const c of commands as { command?: unknown; description?: unknown }[]) {
        if (typeof c.command !== "string" || !/^[a-z0-9_]{1,32}$/.test(c.command))
          return bad("BOT_COMMAND_INVALID");
        if (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 256)
          return bad("BOT_COMMAND_DESCRIPTION_INVALID");
      }
      store.commands = commands as { command: string; description: string }[];
      return ok(true);
    }
    case "getMyCommands":
      return ok(store.commands);
    case "sendPhoto":
      return sendFile(store, "photo", params, files);
    case "sendDocument":
      return sendFile(store, "document", params, files);
    case "sendVoice":
      return sendFile(store, "voice", params, files);
    case "getFile": {
      const file = store.files.get(String(params["file_id"]));
      if (!file) return bad("invalid file_id");
      if (file.file_size > 20 * 1024 * 1024) return bad("file is too big");
      const { content: _, ...meta } = file;
      return ok(meta);
    }
    default:
      return undefined;
  }
}
