/**
 * The `ha` toolset's declarations (Home Assistant); their implementation (`tools.ts`) loads on the first call.
 */

import { z } from "zod";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool } from "../../types.js";
import type { HaClient } from "./client.js";

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

/** `ha_list_entities` as the model gets it. */
export const haListEntitiesParameters = z.object({
  domain: name.optional(),
  area: z.string().min(1).optional().describe("an area's name, e.g. Kitchen"),
  search: z.string().min(1).optional().describe("text in the entity id or friendly name"),
  limit: z.number().int().min(1).max(500).default(50),
});

/** `ha_get_state` as the model gets it. */
export const haGetStateParameters = z.object({ entity_id: entityId });

/** `ha_list_services` as the model gets it. */
export const haListServicesParameters = z.object({ domain: name.optional() });

/** `ha_call_service` as the model gets it. */
export const haCallServiceParameters = z.object({
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
});

const haRuns = runsFrom(() => import("./tools.js"), "haToolRuns");

/** The tools of the `ha` toolset, bound to `deps`. */
export function haTools(deps: HaToolsDeps): Tool[] {
  return [
    declareTool<typeof haListEntitiesParameters, HaToolsDeps>({
      name: "ha_list_entities",
      description:
        "List Home Assistant entities, one line each (entity_id · name · state · area). Filter by domain (light, switch, sensor, lock …), area name and/or a search text in the id or name.",
      parameters: haListEntitiesParameters,
      toolset: "ha",
      label: (args) =>
        `🏠 entities${args.domain ? ` ${args.domain}` : ""}${args.area ? ` in ${args.area}` : ""}`,
      implementation: haRuns("ha_list_entities"),
    }),
    declareTool<typeof haGetStateParameters, HaToolsDeps>({
      name: "ha_get_state",
      description: "One Home Assistant entity's state with all its attributes.",
      parameters: haGetStateParameters,
      toolset: "ha",
      label: (args) => `🏠 ${args.entity_id}`,
      implementation: haRuns("ha_get_state"),
    }),
    declareTool<typeof haListServicesParameters, HaToolsDeps>({
      name: "ha_list_services",
      description:
        "Home Assistant's services: without a domain, every domain with its service names; with one, its services and their fields (* required).",
      parameters: haListServicesParameters,
      toolset: "ha",
      label: (args) => `🏠 services${args.domain ? ` ${args.domain}` : ""}`,
      implementation: haRuns("ha_list_services"),
    }),
    declareTool<typeof haCallServiceParameters, HaToolsDeps>({
      name: "ha_call_service",
      description:
        "Call a Home Assistant service (an action), e.g. light.turn_on on light.kitchen with data {brightness_pct: 50}. Locks, alarms and garage doors wait for the user's approval.",
      parameters: haCallServiceParameters,
      toolset: "ha",
      label: (args) =>
        `🏠 ${args.domain}.${args.service}${args.entity_id ? ` ${String(args.entity_id)}` : ""}`,
      implementation: haRuns("ha_call_service"),
    }),
  ].map((tool) => tool.with(deps));
}
