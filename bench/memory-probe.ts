/**
 * `node --import dist/bench/memory-probe.js …`: `HERALD_MEMORY_PROBE_MS` after start, writes this
 * process's memory as V8 and Node see it to the file `HERALD_MEMORY_PROBE` names (the idle scenario).
 */
import { writeFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";

const file = process.env["HERALD_MEMORY_PROBE"];
if (file) {
  setTimeout(
    () => {
      const spaces = Object.fromEntries(
        getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]),
      );
      writeFileSync(file, JSON.stringify({ usage: process.memoryUsage(), spaces }));
    },
    Number(process.env["HERALD_MEMORY_PROBE_MS"] ?? 3000),
  ).unref();
}
