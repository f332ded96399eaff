/**
 * The fake's REST routes under `/api/v10`, answering like Discord: the routes discord.js calls for a
 * bot (gateway/bot, users/@me, DM channels, channel messages create/edit/delete/list, typing, threads
 * from a message, application commands), Discord's JSON error bodies and codes, and `enforce_nonce`.
 */
import type { FakeGateway } from "./gateway.js";
import * as P from "./payloads.js";
import type { FakeWorld } from "./state.js";
import type { Json, RecordedFile } from "./types.js";

/** What a route answers: a status and a JSON body (undefined → no body, e.g. 204). */
export interface RouteResult {
  status: number;
  body?: unknown;
}

export interface RouteContext {
  params: string[];
  query: URLSearchParams;
  body: Json | undefined;
  files: RecordedFile[];
}

type Handler = (ctx: RouteContext) => RouteResult;

/** A Discord JSON error. */
export function apiError(status: number, code: number, message: string, errors?: Json): RouteResult {
  return { status, body: { message, code, ...(errors ? { errors } : {}) } };
}

const tooLong = (field: string, max: number) =>
  apiError(400, 50035, "Invalid Form Body", {
    [field]: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: `Must be ${max} or fewer in length.` }] },
  });

/** Discord's checks on message components: ≤ 5 action rows of ≤ 5 buttons, labels ≤ 80, unique custom_id ≤ 100. */
function checkComponents(rows: unknown): RouteResult | undefined {
  const invalid = (why: string) =>
    apiError(400, 50035, "Invalid Form Body", {
      components: { _errors: [{ code: "COMPONENT_INVALID", message: why }] },
    });
  if (!Array.isArray(rows) || rows.length > 5) return invalid("at most 5 action rows");
  const ids = new Set<string>();
  for (const row of rows as Json[]) {
    if (row["type"] !== 1 || !Array.isArray(row["components"]) || row["components"].length > 5)
      return invalid("an action row holds 1 to 5 buttons");
    for (const button of row["components"] as Json[]) {
      const id = String(button["custom_id"] ?? "");
      if (button["type"] !== 2 || !id || id.length > 100 || ids.has(id)) return invalid("bad custom_id");
      if (typeof button["label"] !== "string" || button["label"].length > 80) return invalid("bad label");
      ids.add(id);
    }
  }
  return undefined;
}

/** Builds the route table over the world and the gateway (bot messages are dispatched like Discord). */
export function routes(
  world: FakeWorld,
  gateway: FakeGateway,
  wsUrl: string,
  nonceWindowMs: number,
): [string, RegExp, Handler][] {
  const channelOr404 = (id: string) => world.channels.get(id);
  const dispatch = (t: string, d: Json) => {
    if (gateway.hasSession) gateway.dispatch(t, d);
  };

  const createMessage: Handler = ({ params, body, files }) => {
    const channelId = params[0]!;
    const channel = channelOr404(channelId);
    if (!channel) return apiError(404, 10003, "Unknown Channel");
    const b = body ?? {};
    const content = typeof b["content"] === "string" ? b["content"] : "";
    if (b["nonce"] !== undefined && String(b["nonce"]).length > 25) return tooLong("nonce", 25);
    if ([...content].length > 2000) return tooLong("content", 2000);
    if (!content && files.length === 0 && !(b["embeds"]?.length > 0)) {
      return apiError(400, 50006, "Cannot send an empty message");
    }
    const nonceKey = b["nonce"] === undefined ? undefined : `${P.IDS.bot}:${String(b["nonce"])}`;
    if (nonceKey && b["enforce_nonce"] === true) {
      const seen = world.nonces.get(nonceKey);
      if (seen && Date.now() - seen.at < nonceWindowMs) {
        return { status: 200, body: world.messages.get(seen.messageId) };
      }
    }
    const extra: Json = {};
    const ref = b["message_reference"];
    if (ref?.message_id) {
      const target = world.messages.get(String(ref.message_id));
      if (!target || target["channel_id"] !== channelId) {
        if (ref.fail_if_not_exists !== false) {
          return apiError(400, 50035, "Invalid Form Body", {
            message_reference: { _errors: [{ code: "REPLIES_UNKNOWN_MESSAGE", message: "Unknown message" }] },
          });
        }
        delete b["message_reference"];
      }
    }
    if (b["components"] !== undefined) {
      const invalid = checkComponents(b["components"]);
      if (invalid) return invalid;
      extra["components"] = b["components"];
    }
    const message = world.buildMessage(channelId, P.IDS.bot, content, extra);
    if (b["message_reference"]) world.makeReply(message, String(b["message_reference"].message_id));
    if (b["nonce"] !== undefined) message["nonce"] = b["nonce"];
    const described: Json[] = Array.isArray(b["attachments"]) ? b["attachments"] : [];
    message["attachments"] = files.map((f, i) => ({
      ...world.storeAttachment(channelId, { fileName: f.name, data: f.data, contentType: f.contentType }),
      ...(described[i]?.description ? { description: described[i]!.description } : {}),
    }));
    world.messages.set(message["id"], message);
    if (nonceKey) world.nonces.set(nonceKey, { messageId: message["id"], at: Date.now() });
    world.recordPosted(message, b, files);
    dispatch("MESSAGE_CREATE", message);
    return { status: 200, body: message };
  };

  const editMessage: Handler = ({ params, body }) => {
    const message = world.messages.get(params[1]!);
    if (!message || message["channel_id"] !== params[0] || message["deleted"]) {
      return apiError(404, 10008, "Unknown Message");
    }
    if (message["author"]?.id !== P.IDS.bot) {
      return apiError(403, 50005, "Cannot edit a message authored by another user");
    }
    const content = String(body?.["content"] ?? message["content"]);
    if ([...content].length > 2000) return tooLong("content", 2000);
    message["content"] = content;
    message["edited_timestamp"] = new Date().toISOString();
    if (body?.["components"] !== undefined) {
      const invalid = checkComponents(body["components"]);
      if (invalid) return invalid;
      message["components"] = body["components"];
    }
    const posted = world.posted.find((p) => p.id === message["id"]);
    if (posted) {
      posted.edits.push(content);
      posted.currentContent = content;
      posted.components = message["components"] ?? [];
    }
    dispatch("MESSAGE_UPDATE", message);
    return { status: 200, body: message };
  };

  const deleteMessage: Handler = ({ params }) => {
    const message = world.messages.get(params[1]!);
    if (!message || message["channel_id"] !== params[0] || message["deleted"]) {
      return apiError(404, 10008, "Unknown Message");
    }
    message["deleted"] = true;
    const posted = world.posted.find((p) => p.id === message["id"]);
    if (posted) posted.deleted = true;
    dispatch("MESSAGE_DELETE", { id: message["id"], channel_id: params[0], guild_id: message["guild_id"] });
    return { status: 204 };
  };

  const startThread: Handler = ({ params, body }) => {
    const [channelId, messageId] = [params[0]!, params[1]!];
    const parent = channelOr404(channelId);
    if (!parent) return apiError(404, 10003, "Unknown Channel");
    const message = world.messages.get(messageId);
    if (!message || message["channel_id"] !== channelId) return apiError(404, 10008, "Unknown Message");
    if (world.channels.has(messageId)) {
      return apiError(400, 160004, "A thread has already been created for this message");
    }
    const name = String(body?.["name"] ?? "");
    if (name.length < 1 || name.length > 100) return tooLong("name", 100);
    const thread = P.thread(messageId, channelId, name, P.IDS.bot);
    thread["guild_id"] = parent["guild_id"];
    world.channels.set(messageId, thread);
    dispatch("THREAD_CREATE", { ...thread, newly_created: true });
    return { status: 201, body: thread };
  };

  const listMessages: Handler = ({ params, query }) => {
    if (!channelOr404(params[0]!)) return apiError(404, 10003, "Unknown Channel");
    const after = BigInt(query.get("after") ?? "0");
    const limit = Math.min(100, Number(query.get("limit") ?? 50));
    const found = [...world.messages.values()]
      .filter((m) => m["channel_id"] === params[0] && !m["deleted"] && BigInt(m["id"]) > after)
      .sort((a, b) => (BigInt(a["id"]) < BigInt(b["id"]) ? -1 : 1))
      .slice(0, limit)
      .reverse();
    return { status: 200, body: found };
  };

  const interactionByToken = (token: string) =>
    [...world.interactions.values()].find((i) => i.token === token && !i.deleted);

  const interactionCallback: Handler = ({ params, body }) => {
    const interaction = world.interactions.get(params[0]!);
    if (!interaction || interaction.token !== params[1]) return apiError(404, 10062, "Unknown interaction");
    if (interaction.callbacks.length > 0) {
      return apiError(400, 40060, "Interaction has already been acknowledged.");
    }
    interaction.callbacks.push(Number(body?.["type"]));
    if (body?.["type"] === 4) interaction.reply = String(body["data"]?.content ?? "");
    return { status: 204 };
  };

  const editOriginal: Handler = ({ params, body }) => {
    const interaction = interactionByToken(params[1]!);
    if (!interaction || interaction.callbacks.length === 0) return apiError(404, 10015, "Unknown Webhook");
    const content = String(body?.["content"] ?? "");
    if ([...content].length > 2000) return tooLong("content", 2000);
    interaction.reply = content;
    const message = world.buildMessage(interaction.channelId, P.IDS.bot, content, {
      id: interaction.id,
      type: 20,
      interaction_metadata: { id: interaction.id, type: 2, name: interaction.name },
    });
    return { status: 200, body: message };
  };

  const deleteOriginal: Handler = ({ params }) => {
    const interaction = interactionByToken(params[1]!);
    if (!interaction) return apiError(404, 10015, "Unknown Webhook");
    interaction.deleted = true;
    return { status: 204 };
  };

  return [
    ["POST", /^\/interactions\/(\d+)\/([^/]+)\/callback$/, interactionCallback],
    ["PATCH", /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/, editOriginal],
    ["DELETE", /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/, deleteOriginal],
    ["GET", /^\/gateway\/bot$/, () => ({ status: 200, body: P.gatewayBot(wsUrl) })],
    ["GET", /^\/users\/@me$/, () => ({ status: 200, body: P.load("userBot") })],
    [
      "POST",
      /^\/users\/@me\/channels$/,
      ({ body }) =>
        world.users.has(String(body?.["recipient_id"]))
          ? { status: 200, body: world.dmWith(String(body?.["recipient_id"])) }
          : apiError(400, 50033, "Invalid Recipient(s)"),
    ],
    [
      "GET",
      /^\/channels\/(\d+)$/,
      ({ params }) => {
        const channel = channelOr404(params[0]!);
        return channel ? { status: 200, body: channel } : apiError(404, 10003, "Unknown Channel");
      },
    ],
    ["GET", /^\/channels\/(\d+)\/messages$/, listMessages],
    ["POST", /^\/channels\/(\d+)\/messages$/, createMessage],
    ["PATCH", /^\/channels\/(\d+)\/messages\/(\d+)$/, editMessage],
    ["DELETE", /^\/channels\/(\d+)\/messages\/(\d+)$/, deleteMessage],
    ["POST", /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/, startThread],
    [
      "POST",
      /^\/channels\/(\d+)\/typing$/,
      ({ params }) => {
        if (!channelOr404(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        world.typing.push(params[0]!);
        return { status: 204 };
      },
    ],
    ["GET", /^\/applications\/(\d+)\/commands$/, () => ({ status: 200, body: world.commands })],
    [
      "PUT",
      /^\/applications\/(\d+)\/commands$/,
      ({ params, body }) => {
        const list = Array.isArray(body) ? (body as Json[]) : [];
        // Discord's own checks: names of 1–32 lowercase letters, digits, - and _; 1–100 character descriptions.
        const invalid = list.find(
          (c) =>
            !/^[-_a-z0-9]{1,32}$/.test(String(c["name"])) ||
            typeof c["description"] !== "string" ||
            c["description"].length < 1 ||
            c["description"].length > 100,
        );
        if (invalid || list.length > 100)
          return { status: 400, body: { code: 50035, message: "Invalid Form Body" } };
        world.commands = list.map((c) => ({
          id: P.snowflake(),
          application_id: params[0],
          type: 1,
          version: P.snowflake(),
          ...c,
        }));
        return { status: 200, body: world.commands };
      },
    ],
  ];
}
