/**
 * Which Home Assistant service calls wait for the user's approval, and the gate that holds them.
 * `ha.approve` lists domains (`lock`: every call of the domain and every call aimed at its entities,
 * `homeassistant.turn_on` included), `domain:device_class` (`cover:garage`: the covers whose
 * device class is garage) and entity ids. A call aimed at more than the entities it names (an area, a
 * device, a label, a floor, `all`) cannot be checked entity by entity, so it waits when any entry
 * concerns its domain (or it is the generic `homeassistant` domain). Under `exec.dangerous_commands`:
 * `manual` holds the call through the approvals of the agent loop (the answer resumes the turn and
 * runs exactly that call), `deny` refuses it, `off` lets it run.
 */
import type { ApprovalAsk } from "../../exec/approvals/index.js";
import type { ToolContext, ToolOutput } from "../../types.js";
import type { HaState } from "./client.js";

/** A service call as the tool makes it. */
export interface HaCall {
  domain: string;
  service: string;
  data?: Record<string, unknown> | undefined;
  target?: Record<string, unknown> | undefined;
}

const ids = (value: unknown): string[] =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value.map(String) : [];

/** The entity ids a call names, and whether it also reaches entities it does not name. */
export function targetsOf(call: HaCall): { entities: string[]; broad: boolean } {
  const entities = [...ids(call.target?.["entity_id"]), ...ids(call.data?.["entity_id"])];
  const broad =
    entities.some((e) => e === "all" || e === "none") ||
    ["area_id", "device_id", "label_id", "floor_id"].some(
      (k) => ids(call.target?.[k]).length > 0 || ids(call.data?.[k]).length > 0,
    );
  return { entities: entities.filter((e) => e !== "all" && e !== "none"), broad };
}

const domainOf = (entry: string) => entry.split(/[:.]/)[0] ?? entry;

/**
 * The `approve` entries `call` matches (empty: it runs without approval). `states` is asked only when
 * a device-class entry concerns one of the named entities.
 */
export async function approvalEntries(
  call: HaCall,
  approve: readonly string[],
  states: () => Promise<HaState[]>,
): Promise<string[]> {
  const matched = new Set<string>();
  if (approve.includes(call.domain)) matched.add(call.domain);
  const { entities, broad } = targetsOf(call);
  if (broad) {
    for (const entry of approve)
      if (call.domain === "homeassistant" || domainOf(entry) === call.domain) matched.add(entry);
  }
  const classEntries = approve.filter((e) => e.includes(":"));
  const needsStates = entities.some((e) => classEntries.some((c) => domainOf(c) === domainOf(e)));
  const byId = needsStates
    ? new Map((await states()).map((s) => [s.entity_id, s]))
    : new Map<string, HaState>();
  for (const entity of entities) {
    const domain = domainOf(entity);
    if (approve.includes(entity)) matched.add(entity);
    if (approve.includes(domain)) matched.add(domain);
    const deviceClass = byId.get(entity)?.attributes["device_class"];
    const known = byId.has(entity);
    for (const entry of classEntries) {
      if (domainOf(entry) !== domain) continue;
      // An entity Home Assistant does not list cannot be cleared by its class: it waits.
      if (!known || entry === `${domain}:${String(deviceClass)}`) matched.add(entry);
    }
  }
  return [...matched];
}

/** The exact call an approval is for (the same arguments give the same text). */
export function callText(call: HaCall): string {
  const parts = {
    ...(call.target ? { target: call.target } : {}),
    ...(call.data ? { data: call.data } : {}),
  };
  return `${call.domain}.${call.service} ${JSON.stringify(parts)}`;
}

/**
 * Undefined: go ahead (nothing to approve, or approved). Otherwise the call's output: held for the
 * user's approval, or refused.
 */
export async function gateCall(
  mode: "manual" | "deny" | "off",
  ctx: ToolContext,
  call: HaCall,
  entries: readonly string[],
): Promise<ToolOutput | undefined> {
  if (entries.length === 0 || mode === "off") return undefined;
  const { entities } = targetsOf(call);
  const on = entities.length ? ` on ${entities.join(", ")}` : "";
  const ask: ApprovalAsk = {
    command: callText(call),
    ruleId: `ha:${entries[0]}`,
    ruleIds: entries.map((e) => `ha:${e}`),
    ruleDescription: `Home Assistant ${call.domain}.${call.service}${on} (ha.approve: ${entries.join(", ")})`,
  };
  const approvals = ctx.state.approvals;
  if (mode === "manual" && approvals) {
    if (await approvals.check(ctx.origin.sessionKey, ask.command, ask.ruleIds ?? [ask.ruleId])) {
      ctx.logger.info({ rule: ask.ruleId }, "home assistant call runs with the user's approval");
      return undefined;
    }
    ctx.logger.info({ rule: ask.ruleId }, "home assistant call waits for approval");
    return {
      content: `not done yet: ${ask.ruleDescription} needs the user's approval. They were asked; their answer resumes this.`,
      approval: ask,
    };
  }
  ctx.logger.warn({ rule: ask.ruleId }, "home assistant call refused");
  return {
    content: `error: refused: ${ask.ruleDescription} needs the owner's approval, which this gateway does not grant (exec.dangerous_commands: deny). Tell the user what you wanted to do.`,
    isError: true,
  };
}
