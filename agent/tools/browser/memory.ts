/**
 * The browser's memory as the caps count it: the proportional set size (PSS, `/proc/<pid>/smaps_rollup`)
 * summed over the browser process and all its descendants (renderers, the GPU and network services,
 * zygotes). PSS shares each shared page among the processes that map it, so the sum is what the
 * browser costs the machine, not the multiple-counted sum of RSS. Linux only; elsewhere undefined.
 */
import { readFile } from "node:fs/promises";

async function children(pid: number): Promise<number[]> {
  const tasks = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return tasks
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

async function pssBytes(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
  const kb = /^Pss:\s+(\d+) kB/m.exec(text)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/** PSS of `pid` and its descendants, in bytes, and how many processes; undefined when unreadable. */
export async function treeMemory(pid: number): Promise<{ bytes: number; processes: number } | undefined> {
  const seen = new Set<number>();
  const queue = [pid];
  let bytes = 0;
  while (queue.length > 0 && seen.size < 500) {
    const next = queue.shift() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    bytes += await pssBytes(next);
    queue.push(...(await children(next)));
  }
  return bytes > 0 ? { bytes, processes: seen.size } : undefined;
}
