/**
 * The four tools of the `ha` toolset over one `HaClient`: list entities (compact, filtered), read
 * one entity's state, list services, call a service (gated by `ha.approve`, see approval.ts).
 */
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import { approvalEntries, gateCall, type HaCall, targetsOf } from "./approval.js";
import type { HaClient, HaState } from "./client.js";
import { areaNames, describeState, listEntities, listServices } from "./format.js";

/** What the tools share. */
export interface HaToolsDeps {
  client: HaClient;
  /** `ha.approve`. */
  approve: readonly string[];
  /** `exec.dangerous_commands`. */
  approvalMode: "manual" | "deny" | "off";
}

const name = z
  .string()
  .regex(/^[a-z0-9_]+$/, "lowercase letters, digits and _")
  .describe("e.g. light");

const entityId = z.string().regex(/^[a-z0-9_]+\.[a-z0-9_]+$/, "domain.object_id, e.g. light.kitchen");

/** The tools of the `ha` toolset. */
export function haTools(deps: HaToolsDeps): Tool[] {
  const { client } = deps;
  const list = defineTool({
    name: "ha_list_entities",
    description:
      "List Home Assistant entities, one line each (entity_id · name · state · area). Filter by domain (light, switch, sensor, lock …), area name and/or a search text in the id or name.",
    parameters: z.object({
      domain: name.optional(),
      area: z.string().min(1).optional().describe("an area's name, e.g. Kitchen"),
      search: z.string().min(1).optional().describe("text in the entity id or friendly name"),
      limit: z.number().int().min(1).max(500).default(50),
    }),
    toolset: "ha",
    label: (args) =>
      `🏠 entities${args.domain ? ` ${args.domain}` : ""}${args.area ? ` in ${args.area}` : ""}`,
    async execute(args, ctx) {
      const [states, registries] = await Promise.all([
        client.states(ctx.signal),
        client.registries(ctx.signal),
      ]);
      return listEntities(states, areaNames(registries), args);
    },
  });
  const get = defineTool({
    name: "ha_get_state",
    description: "One Home Assistant entity's state with all its attributes.",
    parameters: z.object({ entity_id: entityId }),
    toolset: "ha",
    label: (args) => `🏠 ${args.entity_id}`,
    async execute(args, ctx) {
      const [states, registries] = await Promise.all([
        client.states(ctx.signal),
        client.registries(ctx.signal),
      ]);
      const state = states.find((s) => s.entity_id === args.entity_id);
      if (!state)
        return {
          content: `error: no entity ${args.entity_id}; list them with ha_list_entities.`,
          isError: true,
        };
      return describeState(state, areaNames(registries).get(args.entity_id));
    },
  });
  const services = defineTool({
    name: "ha_list_services",
    description:
      "Home Assistant's services: without a domain, every domain with its service names; with one, its services and their fields (* required).",
    parameters: z.object({ domain: name.optional() }),
    toolset: "ha",
    label: (args) => `🏠 services${args.domain ? ` ${args.domain}` : ""}`,
    async execute(args, ctx) {
      return listServices(await client.services(ctx.signal), args.domain);
    },
  });
  return [list, get, services, callTool(deps)];
}

function callTool(deps: HaToolsDeps): Tool {
  const { client } = deps;
  return defineTool({
    name: "ha_call_service",
    description:
      "Call a Home Assistant service (an action), e.g. light.turn_on on light.kitchen with data {brightness_pct: 50}. Locks, alarms and garage doors wait for the user's approval.",
    parameters: z.object({
      domain: name,
      service: name.describe("e.g. turn_on"),
      entity_id: z
        .union([entityId, z.array(entityId).min(1)])
        .optional()
        .describe("the target entity or entities"),
      target: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("other targets: {area_id}, {device_id}, {label_id}"),
      data: z.record(z.string(), z.unknown()).optional().describe("the service's fields"),
      return_response: z.boolean().optional().describe("for services that answer with data"),
    }),
    toolset: "ha",
    label: (args) => `🏠 ${args.domain}.${args.service}${args.entity_id ? ` ${String(args.entity_id)}` : ""}`,
    async execute(args, ctx) {
      const target = args.entity_id ? { ...args.target, entity_id: args.entity_id } : args.target;
      const call: HaCall = { domain: args.domain, service: args.service, data: args.data, target };
      const entries = await approvalEntries(call, deps.approve, () => client.states(ctx.signal));
      const held = await gateCall(deps.approvalMode, ctx, call, entries);
      if (held) return held;
      const answer = await client.callService(call, args.return_response === true, ctx.signal);
      return describeCall(call, answer.response, await statesAfter(deps, call, ctx));
    },
  });
}

/** The named entities' states after a call (best effort: empty when they cannot be read). */
async function statesAfter(deps: HaToolsDeps, call: HaCall, ctx: ToolContext): Promise<HaState[]> {
  const { entities } = targetsOf(call);
  if (entities.length === 0) return [];
  const states = await deps.client.states(ctx.signal).catch(() => []);
  return states.filter((s) => entities.includes(s.entity_id));
}

function describeCall(call: HaCall, response: unknown, after: HaState[]): string {
  const lines = [`Home Assistant ran ${call.domain}.${call.service}.`];
  for (const s of after) lines.push(`${s.entity_id} is now ${s.state}`);
  if (response !== undefined && response !== null)
    lines.push(`response: ${JSON.stringify(response).slice(0, 8000)}`);
  return lines.join("\n");
}
