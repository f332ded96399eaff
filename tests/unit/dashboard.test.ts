/**
 * The dashboard's parts that a browser test cannot drive cheaply: escaping, login expiry and lockout
 * (a fake clock), the last hour's figures, and the newest-first search it runs on the state file.
 */
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../app/config.js";
import { Activity } from "../../gateway/dashboard/activity.js";
import { COOKIE_NAME, DashboardAuth } from "../../gateway/dashboard/auth.js";
import { html } from "../../gateway/dashboard/html.js";
import { UsageRollup } from "../../gateway/dashboard/usage-rollup.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

const request = (cookie?: string, remote = "127.0.0.1", host = "127.0.0.1:8642") =>
  ({ headers: { cookie, host }, socket: { remoteAddress: remote } }) as unknown as IncomingMessage;

describe("dashboard", () => {
  it("escapes every interpolated value, keeping nested markup", () => {
    const title = `<script>alert("x")</script>`;
    expect(String(html`<p title="${title}">${title}${html`<b>ok</b>`}</p>`)).toBe(
      `<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<b>ok</b></p>`,
    );
  });

  it("a login expires after its time; the password is the only way in", () => {
    let now = 1_000_000;
    const auth = new DashboardAuth(
      { secrets: ["a-long-password"], loopbackServer: true, sessionTtlMs: 60_000 },
      () => now,
    );
    expect(auth.check(request()).kind).toBe("login");
    const ok = auth.login("a-long-password", "10.0.0.1", false);
    if (!("cookie" in ok)) throw new Error("login failed");
    const cookie = ok.cookie.split(";")[0]!;
    expect(cookie.startsWith(`${COOKIE_NAME}=`)).toBe(true);
    const state = auth.check(request(cookie));
    expect(state.kind).toBe("ok");
    if (state.kind !== "ok") return;
    expect(auth.csrfValid(state, state.csrf)).toBe(true);
    expect(auth.csrfValid(state, undefined)).toBe(false);
    expect(auth.csrfValid(state, `${state.csrf}x`)).toBe(false);
    now += 60_001;
    expect(auth.check(request(cookie)).kind).toBe("login");
    expect(auth.check(request(`${COOKIE_NAME}=guessed`)).kind).toBe("login");
  });

  it("ten wrong passwords from one address lock it out, not others", () => {
    const auth = new DashboardAuth({ secrets: ["a-long-password"], loopbackServer: false });
    for (let i = 0; i < 10; i++)
      expect(auth.login("wrong", "10.0.0.9", false)).toMatchObject({ status: 401 });
    expect(auth.login("a-long-password", "10.0.0.9", false)).toMatchObject({ status: 429 });
    expect("cookie" in auth.login("a-long-password", "10.0.0.10", false)).toBe(true);
  });

  it("without a secret: open to loopback on a loopback server only", () => {
    const open = new DashboardAuth({ secrets: [], loopbackServer: true });
    expect(open.check(request()).kind).toBe("ok");
    expect(open.check(request(undefined, "::ffff:127.0.0.1", "localhost:8642")).kind).toBe("ok");
    expect(open.check(request(undefined, "192.168.1.5")).kind).toBe("refused");
    const exposed = new DashboardAuth({ secrets: [], loopbackServer: false });
    const refused = exposed.check(request());
    expect(refused).toMatchObject({ kind: "refused" });
    expect(refused.kind === "refused" && refused.reason).toContain("DASHBOARD_PASSWORD");
  });

  it("keeps the last hour minute by minute: turns, median latency, errors", () => {
    let now = 10 * 3_600_000 + 30_000;
    const activity = new Activity(() => now);
    const seen: string[] = [];
    activity.subscribe((e) => seen.push(e.type));
    const finished = (at: number, durationMs: number, outcome: "ok" | "failed" = "ok") =>
      activity.record({
        type: "turn-finished",
        sessionKey: "k",
        sessionId: "s",
        platform: "api",
        outcome,
        durationMs,
        error: outcome === "failed" ? "model down" : undefined,
        at,
      });
    finished(now - 90_000, 10);
    finished(now - 5_000, 30);
    finished(now - 4_000, 50);
    finished(now - 3_000, 40, "failed");
    const minutes = activity.minutes();
    expect(minutes).toHaveLength(60);
    expect(minutes.at(-1)).toMatchObject({ turns: 3, failed: 1, p50Ms: 40 });
    expect(minutes.at(-2)).toMatchObject({ turns: 1, p50Ms: 10 });
    expect(activity.errors()).toEqual([{ source: "turn on api", message: "model down", at: now - 3_000 }]);
    expect(seen).toHaveLength(4);
    now += 2 * 3_600_000;
    expect(activity.minutes().every((m) => m.turns === 0)).toBe(true);
    expect(activity.errors()).toEqual([]);
  });

  it("refuses a short DASHBOARD_PASSWORD by name, and reads the dashboard keys", () => {
    const env = { HERALD_HOME: "/nonexistent-herald-home" };
    expect(() => loadConfig({ env: { ...env, DASHBOARD_PASSWORD: "short" } })).toThrow(
      /DASHBOARD_PASSWORD \(config.yaml: dashboard.password\) is invalid: must be at least 12 characters/,
    );
    expect(() => loadConfig({ env: { ...env, DASHBOARD_SESSION_HOURS: "soon" } })).toThrow(
      /DASHBOARD_SESSION_HOURS must be a whole number/,
    );
    const config = loadConfig({
      env: {
        ...env,
        DASHBOARD_PASSWORD: "a-long-enough-one",
        DASHBOARD_SESSION_HOURS: "2",
        DASHBOARD_ENABLED: "no",
      },
    });
    expect(config.dashboard).toEqual({ enabled: false, password: "a-long-enough-one", sessionHours: 2 });
    expect(loadConfig({ env }).dashboard).toEqual({ enabled: true, sessionHours: 12 });
  });

  it("sums usage per UTC day once, today live, and merges the days", async () => {
    const DAY = 86_400_000;
    const state = SqliteState.open(":memory:");
    const now = 100 * DAY + 3_600_000;
    const turn = (id: string, user: string) => ({
      id,
      sessionId: "s",
      userId: user,
      chat: { platform: "telegram" },
    });
    const line = (model: string, prompt: number) => ({
      model,
      promptTokens: prompt,
      completionTokens: 1,
      cachedTokens: 0,
      calls: 1,
    });
    state.usage.record(turn("t1", "1"), [line("a", 10)], 97 * DAY + 5);
    state.usage.record(turn("t2", "2"), [line("a", 20), line("b", 5)], 99 * DAY + 5);
    state.usage.record(turn("t3", "1"), [line("b", 7)], 100 * DAY + 5);
    let queries = 0;
    const rollup = new UsageRollup(
      {
        summary: (o) => {
          queries++;
          return state.usage.summary(o);
        },
        firstAt: () => state.usage.firstAt(),
      },
      () => now,
    );
    const all = await rollup.summary("all", "model");
    expect(all.map((l) => [l.model, l.promptTokens, l.calls])).toEqual([
      ["a", 30, 2],
      ["b", 12, 2],
    ]);
    expect(queries).toBe(4);
    // Again: only today is read; the past days come from the cache.
    expect(await rollup.summary("all", "model")).toEqual(all);
    expect(queries).toBe(5);
    const twoDays = await rollup.summary(2, "user");
    expect(twoDays.map((l) => [l.user, l.model, l.promptTokens])).toEqual([
      ["telegram:2", "a", 20],
      ["telegram:1", "b", 7],
      ["telegram:2", "b", 5],
    ]);
    state.close();
  });

  it("sums usage per agent by the sessions' keys; a deleted session's usage counts towards no agent", async () => {
    const DAY = 86_400_000;
    const state = SqliteState.open(":memory:");
    const policy = { mode: "none", idleMinutes: 60, atHour: 4 } as const;
    const open = (agent: string | undefined, chatId: string) =>
      state.sessions.open(
        {
          chat: { platform: "telegram", chatId },
          chatType: "dm",
          userId: chatId,
          ...(agent ? { agent } : {}),
        },
        policy,
        DAY,
      ).session;
    const work = open(undefined, "1");
    const family = open("family", "1");
    const gone = open("family", "2");
    const line = (model: string, prompt: number) => ({
      model,
      promptTokens: prompt,
      completionTokens: 1,
      cachedTokens: 0,
      calls: 1,
    });
    const record = (id: string, sessionId: string, prompt: number, model = "m") =>
      state.usage.record(
        { id, sessionId, userId: "1", chat: { platform: "telegram" } },
        [line(model, prompt)],
        DAY + 10,
      );
    record("t1", work.id, 100);
    record("t2", family.id, 20);
    record("t3", family.id, 3, "n");
    record("t4", gone.id, 5);
    const byAgent = (o: { agent?: string } = {}) =>
      state.usage.summary({ by: "agent", ...o }).map((l) => [l.agent, l.model, l.promptTokens]);
    expect(byAgent()).toEqual([
      ["default", "m", 100],
      ["family", "m", 25],
      ["family", "n", 3],
    ]);
    const sum = (agent?: string) =>
      state.usage.summary({ by: "model", agent }).reduce((a, l) => a + l.promptTokens, 0);
    expect([sum(), sum("default"), sum("family"), sum("nobody")]).toEqual([128, 100, 28, 0]);
    expect(state.usage.summary({ by: "user", agent: "family" }).map((l) => l.user)).toEqual([
      "telegram:1",
      "telegram:1",
    ]);

    // `herald sessions prune` deletes the ended session: its usage stays in the totals, of no agent.
    state.sessions.reset(gone.key, "manual");
    expect(state.sessions.prune(DAY + 30)).toBe(1);
    expect(sum()).toBe(128);
    expect(sum("family")).toBe(23);
    expect(byAgent().at(-1)).toEqual(["?", "m", 5]);

    // The rollup keeps each agent's days apart.
    const rollup = new UsageRollup(state.usage, () => 3 * DAY);
    const days = async (agent?: string) =>
      (await rollup.summary("all", "model", agent)).reduce((a, l) => a + l.promptTokens, 0);
    expect([await days(), await days("default"), await days("family")]).toEqual([128, 100, 23]);
    state.close();
  });

  it("searches newest first, falling back to any word", () => {
    const state = SqliteState.open(":memory:");
    const policy = { mode: "none", idleMinutes: 60, atHour: 4 } as const;
    for (let i = 0; i < 5; i++) {
      const { session } = state.sessions.open(
        { chat: { platform: "telegram", chatId: String(i) }, chatType: "dm", userId: String(i) },
        policy,
      );
      state.sessions.append(session.id, [{ role: "user", content: `note ${i} about plums` }], {
        now: 1000 + i,
      });
    }
    const hits = state.sessions.searchNewest("plums", 3);
    expect(hits.map((h) => h.sessionKey)).toEqual(["telegram:dm:4", "telegram:dm:3", "telegram:dm:2"]);
    expect(hits[0]!.snippet).toContain("**plums**");
    expect(state.sessions.searchNewest("plums cherries", 10)).toHaveLength(5);
    expect(state.sessions.searchNewest("cherries", 10)).toEqual([]);
    expect(state.sessions.countActive()).toBe(5);
    state.sessions.reset("telegram:dm:0", "manual");
    expect(state.sessions.countActive()).toBe(4);
    state.close();
  });
});
