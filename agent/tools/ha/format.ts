/**
 * Home Assistant's answers as compact text for the model: one line per entity (id, name, state with
 * its unit, area), filtered by domain, area and a search text; services as `domain: a, b, c`, or one
 * domain's services with their fields; one entity's whole state as bounded JSON.
 */
import type { HaRegistries, HaServices, HaState } from "./client.js";

/** The listing's filters. */
export interface EntityFilter {
  domain?: string | undefined;
  area?: string | undefined;
  search?: string | undefined;
  limit: number;
}

/** Entity id → area name, from the registries (an entity's own area, else its device's). */
export function areaNames(registries: HaRegistries): Map<string, string> {
  const areaName = new Map(registries.areas.map((a) => [a.area_id, a.name]));
  const deviceArea = new Map(registries.devices.map((d) => [d.id, d.area_id ?? undefined]));
  const out = new Map<string, string>();
  for (const e of registries.entities) {
    const areaId = e.area_id ?? (e.device_id ? deviceArea.get(e.device_id) : undefined);
    const name = areaId ? areaName.get(areaId) : undefined;
    if (name) out.set(e.entity_id, name);
  }
  return out;
}

const fold = (s: string) =>
  s
    .toLowerCase()
    .replace(/[\s_-]+/g, " ")
    .trim();

/** One line per entity that passes `filter`, with a head line counting them. */
export function listEntities(states: HaState[], areas: Map<string, string>, filter: EntityFilter): string {
  const search = filter.search ? fold(filter.search) : undefined;
  const area = filter.area ? fold(filter.area) : undefined;
  const matching = states
    .filter((s) => !filter.domain || s.entity_id.startsWith(`${filter.domain}.`))
    .filter((s) => !area || fold(areas.get(s.entity_id) ?? "") === area)
    .filter((s) => {
      if (!search) return true;
      const name = String(s.attributes["friendly_name"] ?? "");
      return fold(s.entity_id).includes(search) || fold(name).includes(search);
    })
    .sort((a, b) => a.entity_id.localeCompare(b.entity_id));
  if (matching.length === 0) {
    const known = area && areas.size > 0 ? ` Areas: ${[...new Set(areas.values())].sort().join(", ")}.` : "";
    return `No entities match.${known}`;
  }
  const shown = matching.slice(0, filter.limit);
  const lines = shown.map((s) => entityLine(s, areas.get(s.entity_id)));
  const more =
    matching.length > shown.length
      ? `\n… ${matching.length - shown.length} more: narrow with domain, area or search.`
      : "";
  return `${matching.length} entit${matching.length === 1 ? "y" : "ies"} (entity_id · name · state · area):\n${lines.join("\n")}${more}`;
}

function entityLine(s: HaState, area: string | undefined): string {
  const name = s.attributes["friendly_name"];
  const unit = s.attributes["unit_of_measurement"];
  const state = unit ? `${s.state} ${String(unit)}` : s.state;
  return [s.entity_id, typeof name === "string" ? name : "", state, area ?? ""]
    .join(" · ")
    .replace(/( · )+$/, "");
}

/** One entity's state, its attributes as JSON (cut at `maxChars`). */
export function describeState(s: HaState, area: string | undefined, maxChars = 4000): string {
  const attributes = JSON.stringify(s.attributes, null, 1);
  const cut = attributes.length > maxChars ? `${attributes.slice(0, maxChars)}\n… (cut)` : attributes;
  const when = s.last_changed ? `\nlast changed: ${s.last_changed}` : "";
  return `${s.entity_id}: ${s.state}${area ? `\narea: ${area}` : ""}${when}\nattributes: ${cut}`;
}

/** Without a domain: every domain and its service names; with one: its services and their fields. */
export function listServices(services: HaServices, domain?: string): string {
  if (!domain) {
    return Object.keys(services)
      .sort()
      .map(
        (d) =>
          `${d}: ${Object.keys(services[d] ?? {})
            .sort()
            .join(", ")}`,
      )
      .join("\n");
  }
  const of = services[domain];
  if (!of) return `No domain ${domain}. Domains: ${Object.keys(services).sort().join(", ")}.`;
  return Object.entries(of)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, info]) => {
      const fields = Object.entries(info.fields ?? {}).map(
        ([f, d]) => `${f}${d.required ? "*" : ""}${d.description ? ` (${d.description})` : ""}`,
      );
      const head = `${domain}.${name}${info.description ? `: ${info.description}` : ""}`;
      return fields.length ? `${head}\n  fields: ${fields.join("; ")}` : head;
    })
    .join("\n");
}
