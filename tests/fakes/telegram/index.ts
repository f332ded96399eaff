/**
 * A fake Telegram Bot API server on 127.0.0.1 (random free port) that grammY talks to as it would to
 * api.telegram.org: `/bot<token>/<method>` with JSON or multipart bodies, `/file/bot<token>/<path>`
 * downloads, long-polled `getUpdates` with Telegram's offset confirmation, webhooks. It records every
 * call and injects faults (429 with retry_after, 5xx, slow answers, raw bodies, malformed updates).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { apiError, defaultDescription, readParams, sendJson } from "./http.js";
import { callMethod } from "./methods.js";
import { FakeStore } from "./store.js";
import type { FakeCall, FakeFault, FakeTelegram, FakeTelegramOptions } from "./types.js";

export type * from "./types.js";

interface Poll {
  res: ServerResponse;
  call: FakeCall;
  limit: number;
  timer: NodeJS.Timeout;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the fake. Close it with `close()` (held polls answered, keep-alive connections dropped). */
export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const token = options.token ?? "7000000001:TEST-token_for_fake";
  const store = new FakeStore(Number(token.split(":")[0]) || 7000000001, options.username ?? "herald_bot");
  const calls: FakeCall[] = [];
  const faults = new Map<string, (FakeFault & { left: number })[]>();
  const watchers = new Set<() => void>();
  let poll: Poll | undefined;
  let webhook: { url: string; secretToken?: string } | undefined;
  let closed = false;
  let clicks = 0;

  const notify = () => {
    for (const w of [...watchers]) w();
  };

  const answerPoll = () => {
    if (!poll) return;
    const { res, call, limit, timer } = poll;
    poll = undefined;
    clearTimeout(timer);
    call.status = 200;
    if (!res.writableEnded) sendJson(res, 200, { ok: true, result: store.take(undefined, limit) });
    notify();
  };

  const takeFault = (method: string, params: Record<string, unknown>): FakeFault | undefined => {
    const list = faults.get(method);
    const fault = list?.find(
      (f) =>
        f.left > 0 &&
        (f.chatId === undefined || String(f.chatId) === String(params["chat_id"])) &&
        (f.when === undefined || f.when(params)),
    );
    if (!fault) return undefined;
    fault.left -= 1;
    return fault;
  };

  const getUpdates = (res: ServerResponse, call: FakeCall) => {
    if (webhook) {
      return apiError(
        res,
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    if (poll) {
      // Telegram answers the older of two concurrent polls with 409.
      const older = poll;
      poll = undefined;
      clearTimeout(older.timer);
      older.call.status = 409;
      apiError(older.res, 409, defaultDescription(409));
    }
    const { params } = call;
    const offset = params["offset"] === undefined ? undefined : Number(params["offset"]);
    const limit = Math.min(100, Math.max(1, Number(params["limit"] ?? 100)));
    const timeoutMs = Number(params["timeout"] ?? 0) * 1000;
    const ready = store.take(offset, limit);
    if (ready.length > 0 || timeoutMs <= 0 || closed) {
      call.status = 200;
      sendJson(res, 200, { ok: true, result: ready });
      return notify();
    }
    poll = { res, call, limit, timer: setTimeout(answerPoll, timeoutMs) };
    res.on("close", () => {
      if (poll?.res === res) {
        clearTimeout(poll.timer);
        poll = undefined;
      }
    });
    notify();
  };

  const serveFile = (res: ServerResponse, path: string) => {
    const file = store.filesByPath.get(decodeURIComponent(path));
    if (!file) return apiError(res, 404, "Not Found");
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.content.length });
    res.end(file.content);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const fileRoute = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    const apiRoute = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const route = fileRoute ?? apiRoute;
    if (!route) return apiError(res, 404, "Not Found");
    if (route[1] !== token) return apiError(res, 401, "Unauthorized");
    if (fileRoute) return serveFile(res, fileRoute[2]!);
    const method = apiRoute![2]!;
    const { params, files } = await readParams(req, url);
    const call: FakeCall = { method, params, files, status: 0, at: Date.now() };
    calls.push(call);
    const fault = takeFault(method, params);
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault?.status) {
      call.status = fault.status;
      if (fault.rawBody !== undefined) {
        res.writeHead(fault.status, { "content-type": "text/html" });
        res.end(fault.rawBody);
      } else {
        const parameters = fault.retryAfter !== undefined ? { retry_after: fault.retryAfter } : undefined;
        apiError(
          res,
          fault.status,
          fault.description ?? defaultDescription(fault.status, fault.retryAfter),
          parameters,
        );
      }
      return notify();
    }
    if (method === "getUpdates") return getUpdates(res, call);
    if (method === "setWebhook") {
      const hook: { url: string; secretToken?: string } = { url: String(params["url"] ?? "") };
      if (params["secret_token"] !== undefined) hook.secretToken = String(params["secret_token"]);
      webhook = hook.url ? hook : undefined;
      answerPollWithConflict();
      call.status = 200;
      sendJson(res, 200, { ok: true, result: true, description: "Webhook was set" });
      return notify();
    }
    if (method === "deleteWebhook") {
      webhook = undefined;
      call.status = 200;
      sendJson(res, 200, { ok: true, result: true, description: "Webhook was deleted" });
      return notify();
    }
    if (method === "getWebhookInfo") {
      call.status = 200;
      sendJson(res, 200, {
        ok: true,
        result: { url: webhook?.url ?? "", pending_update_count: store.pending() },
      });
      return notify();
    }
    const result = callMethod(store, method, params, files);
    if (!result) {
      call.status = 404;
      apiError(res, 404, "Not Found: method not found");
    } else if (result.status === 200 && "result" in result) {
      call.status = 200;
      sendJson(res, 200, { ok: true, result: result.result });
    } else if ("description" in result) {
      call.status = result.status;
      apiError(res, result.status, result.description);
    }
    notify();
  };

  const answerPollWithConflict = () => {
    if (!poll) return;
    const held = poll;
    poll = undefined;
    clearTimeout(held.timer);
    held.call.status = 409;
    apiError(held.res, 409, "Conflict: terminated by setWebhook request");
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) apiError(res, 500, `Internal Server Error: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const wake = () => {
    if (poll && store.pending() > 0) answerPoll();
    notify();
  };

  const fake: FakeTelegram = {
    url: `http://127.0.0.1:${port}`,
    token,
    bot: store.bot,
    calls,
    callsTo: (method, chatId) =>
      calls.filter(
        (c) =>
          c.method === method && (chatId === undefined || String(c.params["chat_id"]) === String(chatId)),
      ),
    pushUpdate(update) {
      const id = store.pushUpdate(update);
      wake();
      return id;
    },
    pushRaw(value) {
      store.pushRaw(value);
      wake();
    },
    userMessage: (input) => store.userMessage(input),
    userClicks(input) {
      const message = store.find(input.chatId, input.messageId);
      const keyboard = (
        message?.["reply_markup"] as { inline_keyboard?: { text: string; callback_data: string }[][] }
      )?.inline_keyboard;
      const button = keyboard?.flat().find((b) => b.text === input.label);
      if (!message || !button)
        throw new Error(`fake Telegram: no button "${input.label}" on message ${input.messageId}`);
      const fromId = input.fromId ?? 111;
      const id = String(++clicks);
      fake.pushUpdate({
        callback_query: {
          id,
          from: { id: fromId, is_bot: false, first_name: input.fromName ?? `User${fromId}` },
          message: structuredClone(message),
          chat_instance: `ci${input.chatId}`,
          data: button.callback_data,
        },
      });
      return id;
    },
    userSends(input) {
      const message = store.userMessage(input);
      fake.pushUpdate({ message });
      return message;
    },
    createTopic: (chatId, name, byBot) => store.createTopic(chatId, name, byBot),
    addFile(content, filePath) {
      const file = store.addFile(Buffer.isBuffer(content) ? content : Buffer.from(content), filePath);
      return { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.file_size };
    },
    fault(method, fault) {
      const list = faults.get(method) ?? [];
      list.push({ ...fault, left: fault.times ?? 1 });
      faults.set(method, list);
    },
    clearFaults() {
      faults.clear();
    },
    messages: (chatId) => store.messages(chatId),
    botMessages: (chatId, threadId) =>
      store
        .messages(chatId)
        .filter((m) => m.from?.id === store.bot.id && !m.deleted && !m["forum_topic_created"])
        .filter((m) => threadId === undefined || m.message_thread_id === threadId),
    waitFor(check, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        if (check()) return resolve();
        const watcher = () => {
          if (!check()) return;
          clearTimeout(timer);
          watchers.delete(watcher);
          resolve();
        };
        const timer = setTimeout(() => {
          watchers.delete(watcher);
          reject(new Error(`fake Telegram: condition not met within ${timeoutMs} ms`));
        }, timeoutMs);
        watchers.add(watcher);
      });
    },
    confirmedOffset: () => store.confirmed,
    pendingUpdates: () => store.pending(),
    webhook: () => webhook,
    async deliverWebhook(update) {
      if (!webhook) throw new Error("fake Telegram: no webhook is set");
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (webhook.secretToken) headers["x-telegram-bot-api-secret-token"] = webhook.secretToken;
      const res = await fetch(webhook.url, { method: "POST", headers, body: JSON.stringify(update) });
      await res.arrayBuffer();
      return res.status;
    },
    async disconnect() {
      // Like a network outage: nothing listens, open connections drop.
      if (poll) {
        clearTimeout(poll.timer);
        poll = undefined;
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async reconnect() {
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      closed = true;
      if (poll) answerPoll();
      for (const list of faults.values()) list.length = 0;
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
