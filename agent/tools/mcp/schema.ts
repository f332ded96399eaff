/**
 * What the model sees of an MCP tool: its name (`mcp_<server>_<tool>`, within the provider's name rules)
 * and its arguments' JSON Schema, cleaned where OpenAI-style function schemas need it.
 */
import { createHash } from "node:crypto";

/** The longest function name OpenAI-style providers accept. */
export const MAX_TOOL_NAME_CHARS = 64;

/**
 * `mcp_<server>_<tool>` with every character outside `[A-Za-z0-9_-]` made `_`; a name over 64
 * characters is cut and ends in a short hash of the whole, so two long names stay distinct.
 */
export function modelToolName(server: string, tool: string): string {
  const name = `mcp_${server}_${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (name.length <= MAX_TOOL_NAME_CHARS) return name;
  const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME_CHARS - 9)}_${hash}`;
}

/** Keys some providers reject in a function's parameters and that carry nothing the model needs. */
const DROPPED_KEYS = new Set(["$schema", "$id", "$comment"]);

/**
 * The server's input schema as a function's `parameters`: always an object schema with `properties`
 * (a server may send `{}` or omit `type`), `$schema`/`$id`/`$comment` dropped at every level, and
 * `required` kept only when it is a list.
 */
export function cleanInputSchema(schema: unknown): Record<string, unknown> {
  const cleaned = clean(schema);
  const object = cleaned && typeof cleaned === "object" && !Array.isArray(cleaned) ? cleaned : {};
  const out: Record<string, unknown> = { ...(object as Record<string, unknown>), type: "object" };
  if (!out["properties"] || typeof out["properties"] !== "object") out["properties"] = {};
  if (out["required"] !== undefined && !Array.isArray(out["required"])) delete out["required"];
  flattenRoot(out);
  return out;
}

type Schema = { properties?: Record<string, unknown>; required?: unknown };

/**
 * OpenAI-style providers refuse `allOf`/`anyOf`/`oneOf`/`not`/`enum` at the root of a function's
 * parameters: their branches' properties are merged into the root (required: by every `allOf` branch,
 * or by all `anyOf`/`oneOf` branches alike), and the keywords dropped. The server still validates.
 */
function flattenRoot(out: Record<string, unknown>): void {
  const properties = out["properties"] as Record<string, unknown>;
  const required = new Set(Array.isArray(out["required"]) ? (out["required"] as string[]) : []);
  const branches = (key: string): Schema[] =>
    Array.isArray(out[key])
      ? (out[key] as unknown[]).filter((b): b is Schema => !!b && typeof b === "object")
      : [];
  const requiredOf = (b: Schema) => (Array.isArray(b.required) ? (b.required as string[]) : []);
  for (const b of branches("allOf")) {
    Object.assign(properties, b.properties ?? {});
    for (const r of requiredOf(b)) required.add(r);
  }
  const alternatives = [...branches("anyOf"), ...branches("oneOf")];
  for (const b of alternatives) for (const [k, v] of Object.entries(b.properties ?? {})) properties[k] ??= v;
  if (alternatives.length > 0)
    for (const r of requiredOf(alternatives[0]!))
      if (alternatives.every((b) => requiredOf(b).includes(r))) required.add(r);
  for (const key of ["allOf", "anyOf", "oneOf", "not", "enum"]) delete out[key];
  if (required.size > 0) out["required"] = [...required];
}

function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (DROPPED_KEYS.has(key)) continue;
    // `properties` maps names to schemas: its keys are names, never schema keywords.
    out[key] =
      key === "properties" && v && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, s]) => [k, clean(s)]))
        : clean(v);
  }
  return out;
}
