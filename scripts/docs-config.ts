/**
 * `npm run docs:config`: writes docs/configuration.md's generated part from the declarations (see
 * app/config-reference.ts). With `--check` it writes nothing and exits 1 when the page is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withReference } from "../app/config-reference.js";

const page = join(import.meta.dirname, "..", "docs", "configuration.md");
const current = readFileSync(page, "utf8");
const fresh = withReference(current);
if (process.argv.includes("--check")) {
  if (fresh !== current) {
    process.stderr.write("docs/configuration.md is stale: run `npm run docs:config`.\n");
    process.exit(1);
  }
} else if (fresh !== current) {
  writeFileSync(page, fresh);
  process.stdout.write("docs/configuration.md written.\n");
} else {
  process.stdout.write("docs/configuration.md is up to date.\n");
}
