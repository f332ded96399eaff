/**
 * `GET /sync` of the fake homeserver: answers at once when there is news after `since` (or on an initial
 * sync), otherwise holds the request as a long poll until something changes or `timeout` runs out.
 */
import type { RouteContext, RouteDeps, RouteResult } from "./routes.js";

const ok = (json: unknown): RouteResult => ({ status: 200, json });

function parseSince(since: string | undefined): number | undefined {
  if (!since) return undefined;
  const n = Number(since.replace(/^s/, ""));
  return Number.isFinite(n) ? n : undefined;
}

function timelineLimit(filterParam: string | undefined, deps: RouteDeps): number {
  let def: unknown;
  if (filterParam?.startsWith("{")) def = JSON.parse(filterParam);
  else if (filterParam) def = deps.state.filters.get(filterParam);
  const limit = (def as { room?: { timeline?: { limit?: number } } } | undefined)?.room?.timeline?.limit;
  return typeof limit === "number" && limit > 0 ? limit : 10;
}

export function sync(ctx: RouteContext, deps: RouteDeps): RouteResult {
  const since = parseSince(ctx.query["since"]);
  const limit = timelineLimit(ctx.query["filter"], deps);
  const timeoutMs = Math.min(Number(ctx.query["timeout"] ?? 0) || 0, deps.maxSyncHoldMs);
  const build = () => deps.state.buildSync(ctx.user!.userId, ctx.token!, since, limit, ctx.user!.deviceId);
  const first = build();
  if (!first.empty || since === undefined || timeoutMs === 0) return ok(first.body);
  return {
    hold: (done) => {
      const deadline = Date.now() + timeoutMs;
      const loop = async () => {
        for (;;) {
          const left = deadline - Date.now();
          if (left <= 0 || deps.isClosed()) return done(ok(build().body));
          await deps.waitForChange(left);
          const next = build();
          if (!next.empty) return done(ok(next.body));
        }
      };
      void loop();
    },
  };
}
