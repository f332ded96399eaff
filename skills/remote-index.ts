/**
 * Skill indexes: JSON documents listing skills to install, `{"skills": [{"name", "description",
 * "source", "version"?, "tags"?}]}` (or the list alone), where `source` is what `herald skills install`
 * takes. `searchIndexes` reads each configured index (through the download function the caller gives)
 * and returns the entries matching every word of a query, by name, description or tag.
 */
import { z } from "zod";
import type { RemoteSkillSearch } from "./types.js";

const entry = z.object({
  name: z.string().min(1).max(100),
  description: z.string().max(1000).default(""),
  source: z.string().min(1).max(1000),
  version: z.string().max(50).optional(),
  tags: z.array(z.string().max(50)).max(50).optional(),
});

const index = z.union([z.object({ skills: z.array(entry).max(10_000) }), z.array(entry).max(10_000)]);

/** One skill an index lists, and the index it came from. */
export type IndexedSkill = z.output<typeof entry> & { index: string };

/** The largest index read. */
const MAX_INDEX_BYTES = 5 * 1024 * 1024;

/**
 * The entries of `indexes` matching every word of `query` (all of them for an empty query), and the
 * indexes that could not be read with why. Never throws.
 */
export async function searchIndexes(
  indexes: readonly string[],
  query: string,
  download: (url: string, maxBytes: number) => Promise<Uint8Array>,
): Promise<{ found: IndexedSkill[]; failed: { index: string; error: string }[] }> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const found: IndexedSkill[] = [];
  const failed: { index: string; error: string }[] = [];
  for (const url of indexes) {
    try {
      const text = Buffer.from(await download(url, MAX_INDEX_BYTES)).toString("utf8");
      const parsed = index.safeParse(JSON.parse(text));
      if (!parsed.success)
        throw new Error(`not a skill index: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.skills;
      for (const skill of list) {
        const hay = [skill.name, skill.description, ...(skill.tags ?? [])].join(" ").toLowerCase();
        if (words.every((w) => hay.includes(w))) found.push({ ...skill, index: url });
      }
    } catch (err) {
      failed.push({ index: url, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { found, failed };
}

/** Where remote skills come from: the configured indexes and the download function (the guarded fetch). */
export interface RemoteSkillsPort {
  /** URLs of the JSON skill indexes (`skills.sources`). */
  indexes: readonly string[];
  download: (url: string, maxBytes: number) => Promise<Uint8Array>;
}

/** `searchIndexes` over the configured indexes, as the skill tools' state API answers it. */
export async function searchRemoteSkills(
  remote: RemoteSkillsPort,
  query: string,
): Promise<RemoteSkillSearch> {
  if (remote.indexes.length === 0) return { indexes: 0, found: [], failed: [] };
  const { found, failed } = await searchIndexes(remote.indexes, query, remote.download);
  return {
    indexes: remote.indexes.length,
    found: found.map(({ name, description, source, version, index }) => ({
      name,
      description,
      source,
      version,
      index,
    })),
    failed,
  };
}
