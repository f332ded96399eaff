/**
 * `node --import dist/bench/import-log.js …`: registers the module hook of `import-log-hooks.ts`, which
 * appends "<epoch ms> <url>" to the file `HERALD_IMPORT_LOG` names for every module loaded (ESM, and
 * the CommonJS entry points ESM imports). The import-cost scenario reads it back.
 */
import { register } from "node:module";

register("./import-log-hooks.js", import.meta.url);
