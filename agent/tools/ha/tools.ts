/**
 * The four tools of the `ha` toolset over one `HaClient`: list entities (compact, filtered), read
 * one entity's state, list services, call a service (gated by `ha.approve`, see approval.ts).
 */
import type { ToolExecute } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";
import { approvalEntries, gateCall, type HaCall, targetsOf } from "./approval.js";
import type { HaState } from "./client.js";
import type {
  HaToolsDeps,
  haCallServiceParameters,
  haGetStateParameters,
  haListEntitiesParameters,
  haListServicesParameters,
} from "./declaration.js";
import { areaNames, describeState, listEntities, listServices } from "./format.js";

/** What the `ha` tools do (`declaration.ts` declares them), bound to `deps`, by name. */
export function haToolRuns(deps: HaToolsDeps) {
  const { client } = deps;
  const list: ToolExecute<typeof haListEntitiesParameters> = async (args, ctx) => {
    const [states, registries] = await Promise.all([
      client.states(ctx.signal),
      client.registries(ctx.signal),
    ]);
    return listEntities(states, areaNames(registries), args);
  };
  const get: ToolExecute<typeof haGetStateParameters> = async (args, ctx) => {
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
  };
  const services: ToolExecute<typeof haListServicesParameters> = async (args, ctx) => {
    return listServices(await client.services(ctx.signal), args.domain);
  };
  return {
    ha_list_entities: list,
    ha_get_state: get,
    ha_list_services: services,
    ha_call_service: callService(deps),
  };
}

function callService(deps: HaToolsDeps): ToolExecute<typeof haCallServiceParameters> {
  const { client } = deps;
  const haCallService: ToolExecute<typeof haCallServiceParameters> = async (args, ctx) => {
    const target = args.entity_id ? { ...args.target, entity_id: args.entity_id } : args.target;
    const call: HaCall = { domain: args.domain, service: args.service, data: args.data, target };
    const entries = await approvalEntries(call, deps.approve, () => client.states(ctx.signal));
    const held = await gateCall(deps.approvalMode, ctx, call, entries);
    if (held) return held;
    const answer = await client.callService(call, args.return_response === true, ctx.signal);
    return describeCall(call, answer.response, await statesAfter(deps, call, ctx));
  };
  return haCallService;
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
