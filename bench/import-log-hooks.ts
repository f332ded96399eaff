/** The module hook of `import-log.ts`: one line per module loaded, with the time it was loaded. */
import { appendFileSync } from "node:fs";

const file = process.env["HERALD_IMPORT_LOG"];

export async function load(
  url: string,
  context: unknown,
  next: (url: string, context: unknown) => Promise<unknown>,
): Promise<unknown> {
  const loaded = await next(url, context);
  if (file) appendFileSync(file, `${Date.now()} ${url}\n`);
  return loaded;
}
