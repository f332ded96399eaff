/**
 * The web chat's own parts without a browser: the live stream's log (what a reconnecting page gets,
 * and when it must read the history again) and the unfinished turn a page opened mid-reply shows;
 * logins and invites (stored hashed, used once, expiring, ended with the user's access).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { WebAuth } from "../../adapters/webchat/auth.js";
import { ChatChannel, EventClock } from "../../adapters/webchat/channel.js";
import type { KeyValueStore } from "../../core/types.js";

/** A response that records what is written to it. */
function sink(): ServerResponse & { text: string } {
  const res = {
    text: "",
    write(chunk: string) {
      res.text += chunk;
      return true;
    },
    end() {},
    on() {
      return res;
    },
  };
  return res as unknown as ServerResponse & { text: string };
}

function kv(): KeyValueStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    get: (k) => map.get(k),
    set: (k, v) => void map.set(k, v),
    delete: (k) => void map.delete(k),
  };
}

const request = (cookie?: string, remote = "203.0.113.9") =>
  ({ headers: cookie ? { cookie } : {}, socket: { remoteAddress: remote } }) as unknown as IncomingMessage;

describe("the chat's live stream", () => {
  it("replays what a page missed after its last event, and refuses a point it no longer has", () => {
    const clock = new EventClock();
    const channel = new ChatChannel(clock);
    channel.emit("user", { turnId: "t1", replyToId: "m1", text: "hi" });
    channel.emit("delta", { turnId: "t1", text: "Hel" });
    const after = `${clock.boot}.${clock.now}`;
    channel.emit("delta", { turnId: "t1", text: "lo" });
    const page = sink();
    expect(channel.attach(page, after)).toBe(true);
    expect(page.text.match(/event: delta/g)).toHaveLength(1);
    expect(page.text).toContain('"text":"lo"');
    channel.emit("message", { id: "r1", turnId: "t1", kind: "reply", text: "Hello" });
    expect(page.text).toContain("event: message");
    expect(channel.attach(sink(), `other.${clock.now}`)).toBe(false);
    expect(channel.attach(sink(), `${clock.boot}.${clock.now + 5}`)).toBe(false);
    for (let i = 0; i < 2_100; i++) channel.emit("delta", { turnId: "t2", text: "x" });
    expect(channel.attach(sink(), after)).toBe(false);
    expect(channel.attach(sink(), `${clock.boot}.${clock.now - 10}`)).toBe(true);
  });

  it("keeps the turn being written, and the prompts not answered yet, until they end", () => {
    const channel = new ChatChannel(new EventClock());
    channel.emit("user", { turnId: "t1", replyToId: "m1", text: "run it" });
    channel.emit("tool", { turnId: "t1", line: "$ ls", callId: "c1" });
    channel.emit("tool_end", { turnId: "t1", callId: "c1", ok: true, durationMs: 5 });
    channel.emit("delta", { turnId: "t1", text: "Done so " });
    channel.emit("delta", { turnId: "t1", text: "far" });
    expect(channel.running.get("t1")).toMatchObject({
      text: "Done so far",
      tools: [{ line: "$ ls", ok: true }],
    });
    const buttons = [[{ label: "Approve", data: "/approve" }]];
    channel.emit("message", { id: "p1", turnId: "t1", kind: "reply", text: "May I?", buttons });
    expect(channel.running.has("t1")).toBe(false);
    expect([...channel.prompts.keys()]).toEqual(["p1"]);
    channel.emit("settle", { id: "p1", text: "May I? → Approve" });
    expect(channel.prompts.size).toBe(0);
  });
});

describe("logins and invites", () => {
  const options = (store: KeyValueStore, now: () => number, allowed = new Set<string>(["owner"])) => ({
    kv: store,
    secrets: ["the-owner-password"],
    loopbackServer: true,
    loginTtlMs: 60_000,
    inviteTtlMs: 10_000,
    isAllowed: (id: string) => allowed.has(id),
    now,
  });

  it("logs the owner in with the secret; stores only hashes; expires", () => {
    let t = 1_000;
    const store = kv();
    const auth = new WebAuth(options(store, () => t));
    expect(auth.check(request())).toEqual({ kind: "login" });
    expect(auth.login("wrong", "a", false)).toMatchObject({ status: 401 });
    const ok = auth.login("the-owner-password", "a", false);
    if (!("cookie" in ok)) throw new Error("no login");
    const cookie = ok.cookie.split(";")[0]!;
    const state = auth.check(request(cookie));
    expect(state).toMatchObject({ kind: "ok", login: { userId: "owner" } });
    expect([...store.map.keys()].join()).not.toContain(cookie.split("=")[1]);
    t += 60_001;
    expect(auth.check(request(cookie))).toEqual({ kind: "login" });
  });

  it("an invite makes one user, once, before it expires; revoked access ends the login", () => {
    let t = 0;
    const allowed = new Set<string>(["owner"]);
    const auth = new WebAuth(options(kv(), () => t, allowed));
    const { token } = auth.invite("Alice");
    const joined = auth.redeem(token, false, (id) => allowed.add(id));
    if (!joined) throw new Error("not joined");
    expect(auth.redeem(token, false, () => undefined)).toBeUndefined();
    const state = auth.check(request(joined.cookie.split(";")[0]!));
    expect(state).toMatchObject({ kind: "ok", login: { name: "Alice" } });
    const userId = state.kind === "ok" ? state.login.userId : "";
    expect(userId).toMatch(/^u-[0-9a-f]{12}$/);
    const late = auth.invite("Bob").token;
    t += 10_001;
    expect(auth.redeem(late, false, () => undefined)).toBeUndefined();
    allowed.delete(userId);
    expect(auth.check(request(joined.cookie.split(";")[0]!))).toEqual({ kind: "login" });
  });

  it("without a secret: the owner on loopback only", () => {
    const auth = new WebAuth({ ...options(kv(), Date.now), secrets: [] });
    expect(auth.check(request(undefined, "127.0.0.1"))).toMatchObject({
      kind: "ok",
      login: { userId: "owner" },
    });
    expect(auth.check(request(undefined, "203.0.113.9"))).toEqual({ kind: "refused" });
  });
});
