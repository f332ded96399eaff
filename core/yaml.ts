/**
 * The YAML parser, loaded on first use: the config loader asks for it only when there is a
 * config.yaml, the skills loader at the first SKILL.md it reads. Loaded as the package (~70 CommonJS
 * files) it costs ~50 ms; the bundle `npm start` runs carries it as one file beside its chunks
 * (`dist/bundle/yaml.cjs`, built by `scripts/bundle.mjs`), ~15 ms. Module by module (`dist/app`, the
 * tests) there is no such file and the package is loaded.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

type Yaml = typeof import("yaml");

let loaded: Yaml | undefined;

/** The `yaml` package's API, loaded the first time it is asked for. */
export function loadYaml(): Yaml {
  if (loaded) return loaded;
  const beside = new URL("./yaml.cjs", import.meta.url);
  loaded = createRequire(import.meta.url)(existsSync(beside) ? fileURLToPath(beside) : "yaml") as Yaml;
  return loaded;
}
