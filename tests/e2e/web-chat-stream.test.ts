/**
 * The web chat's live stream over the wire, as a browser's EventSource reads it: a client that drops
 * the connection in the middle of a reply and reconnects with `Last-Event-ID` gets every piece it
 * missed and none twice; a point in the stream that is gone (another start of the gateway) is told
 * to read the history again; a file the agent sends is offered for download to its own user only.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/gateway-harness.js";
import { PASSWORD, startWebGateway } from "./web-chat-helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Logs in with plain requests: the cookie and the CSRF token. */
async function session(base: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${base}/chat/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: `password=${PASSWORD}`,
  });
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await fetch(`${base}/chat`, { headers: { cookie } })).text();
  return { cookie, csrf: /herald-csrf" content="([^"]+)"/.exec(page)![1]! };
}

/** Reads the chat's stream until `until` says stop (or the server ends it); the events read. */
async function read(
  base: string,
  headers: Record<string, string>,
  query: string,
  until: (events: EventSourceMessage[]) => boolean,
): Promise<EventSourceMessage[]> {
  const abort = new AbortController();
  const res = await fetch(`${base}/chat/events${query}`, { headers, signal: abort.signal });
  expect(res.status).toBe(200);
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body!) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      if (until(events)) break;
    }
  } finally {
    abort.abort();
  }
  return events;
}

const post = (base: string, s: { cookie: string; csrf: string }, path: string, body: unknown) =>
  fetch(`${base}/chat/api/${path}`, {
    method: "POST",
    headers: { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("web chat stream", () => {
  it("a client that reconnects with Last-Event-ID gets what it missed, once", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const s = await session(base);
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`);
    h.llm.script({ text: words.join(" "), pieces: 30, chunkDelayMs: 40 });
    const { cursor } = (await (
      await fetch(`${base}/chat/api/history`, { headers: { cookie: s.cookie } })
    ).json()) as {
      cursor: string;
    };
    const sent = post(base, s, "send", { text: "count slowly" });
    const first = await read(
      base,
      { cookie: s.cookie },
      `?after=${cursor}`,
      (e) => e.filter((x) => x.event === "delta").length >= 5,
    );
    expect((await sent).status).toBe(200);
    const lastId = first.at(-1)!.id!;
    // Away for a while: pieces are written meanwhile.
    await new Promise((r) => setTimeout(r, 300));
    const rest = await read(base, { cookie: s.cookie, "last-event-id": lastId }, "", (e) =>
      e.some((x) => x.event === "message"),
    );
    const all = [...first, ...rest];
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(all[0]!.event).toBe("user");
    const streamed = all
      .filter((e) => e.event === "delta")
      .map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(streamed.join("")).toBe(words.join(" "));
    const reply = JSON.parse(all.find((e) => e.event === "message")!.data) as { text: string; kind: string };
    expect(reply).toMatchObject({ kind: "reply", text: words.join(" ") });
  });

  it("a point in the stream from before a restart asks the page to read the history again", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    const s = await session(base);
    const events = await read(base, { cookie: s.cookie, "last-event-id": "oldboot.12" }, "", () => false);
    expect(events.map((e) => e.event)).toEqual(["reset"]);
    // A login survives the restart (stored hashed in the state file).
    await h.restart();
    expect((await fetch(`${h.apiUrl}/chat/api/history`, { headers: { cookie: s.cookie } })).status).toBe(200);
  });

  it("a file the agent sends is a download for its own user only", async () => {
    h = await startWebGateway();
    const base = h.apiUrl;
    h.llm.script(
      {
        toolCalls: [{ name: "terminal", arguments: { command: "printf 'quarterly numbers' > report.txt" } }],
      },
      {
        toolCalls: [
          { name: "send_message", arguments: { target: "origin", file: "report.txt", text: "Your report" } },
        ],
      },
      { text: "Sent it." },
    );
    const s = await session(base);
    const { cursor } = (await (
      await fetch(`${base}/chat/api/history`, { headers: { cookie: s.cookie } })
    ).json()) as {
      cursor: string;
    };
    await post(base, s, "send", { text: "send me the report" });
    const events = await read(base, { cookie: s.cookie }, `?after=${cursor}`, (e) =>
      e.some((x) => x.event === "message" && (JSON.parse(x.data) as { text: string }).text === "Sent it."),
    );
    const withFile = events
      .filter((e) => e.event === "message")
      .map((e) => JSON.parse(e.data) as { files?: { name: string; url: string }[] })
      .find((m) => m.files?.length);
    expect(withFile?.files?.[0]?.name).toBe("report.txt");
    const url = `${base}${withFile!.files![0]!.url}`;
    const ok = await fetch(url, { headers: { cookie: s.cookie } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-disposition")).toMatch(/^attachment/);
    expect(await ok.text()).toBe("quarterly numbers");
    // Another user (invited) cannot open it, nor can anyone without a login.
    const invite = (await (await post(base, s, "invite", { name: "Guest" })).json()) as { path: string };
    const joined = await fetch(`${base}${invite.path}`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base },
    });
    const guest = joined.headers.get("set-cookie")!.split(";")[0]!;
    expect((await fetch(url, { headers: { cookie: guest } })).status).toBe(404);
    expect((await fetch(url)).status).toBe(401);
  });
});
