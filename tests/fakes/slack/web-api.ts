/**
 * The Web API methods the fake Slack answers, each as Slack answers it (fields trimmed to what clients
 * read). Authentication and fault injection happen before these run.
 */
import type { FakeSlackCall, FakeSlackMessage, FakeSlackUpload } from "./types.js";

type Json = Record<string, unknown>;
type Handler = (args: Json, call: FakeSlackCall) => Json;

/** Slack's error answer. */
export const fail = (error: string, extra: Json = {}) => ({ ok: false, error, ...extra });

export interface WebApiContext {
  ids: { botUserId: string; botId: string; teamId: string; appToken: string };
  users: Record<string, { name: string; displayName?: string; realName?: string }>;
  pendingUploads: Map<string, { filename: string; bytes?: Buffer }>;
  uploads: FakeSlackUpload[];
  messages: FakeSlackMessage[];
  nextTs: () => string;
  nextId: (prefix: string) => string;
  url: () => string;
}

export function webApiHandlers(ctx: WebApiContext): Record<string, Handler> {
  const { botUserId, botId, teamId, appToken } = ctx.ids;
  const { pendingUploads, uploads, nextTs, nextId } = ctx;
  const reactions = new Set<string>();
  return {
    "auth.test": () => ({
      ok: true,
      url: "https://fake.slack.com/",
      team: "Fake",
      user: "herald",
      team_id: teamId,
      user_id: botUserId,
      bot_id: botId,
    }),
    "chat.postMessage": (a) => {
      if (!a["channel"]) return fail("channel_not_found");
      if (!a["text"] && !a["blocks"]) return fail("no_text");
      const ts = nextTs();
      const blocks = Array.isArray(a["blocks"]) ? (a["blocks"] as Json[]) : [];
      if (blocks.length > 50) return fail("invalid_blocks");
      ctx.messages.push({
        channel: String(a["channel"]),
        ts,
        threadTs: a["thread_ts"] === undefined ? undefined : String(a["thread_ts"]),
        text: String(a["text"] ?? ""),
        blocks,
      });
      const message = {
        type: "message",
        user: botUserId,
        bot_id: botId,
        text: a["text"],
        ts,
        ...(a["thread_ts"] ? { thread_ts: a["thread_ts"] } : {}),
      };
      return { ok: true, channel: a["channel"], ts, message };
    },
    "chat.update": (a) => {
      const message = ctx.messages.find((m) => m.ts === a["ts"] && m.channel === a["channel"]);
      if (!a["ts"]) return fail("message_not_found");
      if (message) {
        if (a["text"] !== undefined) message.text = String(a["text"]);
        if (Array.isArray(a["blocks"])) message.blocks = a["blocks"] as Json[];
      }
      return { ok: true, channel: a["channel"], ts: a["ts"], text: a["text"] };
    },
    "chat.delete": (a) =>
      a["ts"] ? { ok: true, channel: a["channel"], ts: a["ts"] } : fail("message_not_found"),
    "reactions.add": (a) => {
      const key = `${a["channel"]}:${a["timestamp"]}:${a["name"]}`;
      if (reactions.has(key)) return fail("already_reacted");
      reactions.add(key);
      return { ok: true };
    },
    "reactions.remove": (a) =>
      reactions.delete(`${a["channel"]}:${a["timestamp"]}:${a["name"]}`) ? { ok: true } : fail("no_reaction"),
    "conversations.info": (a) => {
      const id = String(a["channel"] ?? "");
      if (!id) return fail("channel_not_found");
      return {
        ok: true,
        channel: {
          id,
          is_im: id.startsWith("D"),
          is_mpim: false,
          is_channel: id.startsWith("C"),
          is_private: id.startsWith("G"),
          name: id.toLowerCase(),
        },
      };
    },
    "users.info": (a) => {
      const id = String(a["user"] ?? "");
      const u = ctx.users[id];
      if (!u) return fail("user_not_found");
      return {
        ok: true,
        user: {
          id,
          team_id: teamId,
          name: u.name,
          real_name: u.realName ?? u.name,
          profile: { display_name: u.displayName ?? "", real_name: u.realName ?? u.name },
        },
      };
    },
    "files.getUploadURLExternal": (a) => {
      const fileId = nextId("F");
      pendingUploads.set(fileId, { filename: String(a["filename"] ?? "file") });
      return { ok: true, upload_url: `${ctx.url()}/upload/v1/${fileId}`, file_id: fileId };
    },
    "files.completeUploadExternal": (a) => {
      const files = (Array.isArray(a["files"]) ? a["files"] : []) as { id: string; title?: string }[];
      for (const f of files) {
        const p = pendingUploads.get(f.id);
        if (!p?.bytes) return fail("file_upload_not_found");
        uploads.push({
          fileId: f.id,
          filename: p.filename,
          bytes: p.bytes,
          ...(a["channel_id"] ? { channelId: String(a["channel_id"]) } : {}),
          ...(a["thread_ts"] ? { threadTs: String(a["thread_ts"]) } : {}),
          ...(a["initial_comment"] ? { initialComment: String(a["initial_comment"]) } : {}),
        });
      }
      return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title ?? "" })) };
    },
    "apps.connections.open": (_a, call) => {
      if (call.token !== appToken)
        return fail(call.token?.startsWith("xoxb-") ? "not_allowed_token_type" : "invalid_auth");
      return {
        ok: true,
        url: `${ctx.url().replace(/^http/, "ws")}/link/?ticket=${nextId("t")}&app_id=A0FAKE001`,
      };
    },
  };
}
