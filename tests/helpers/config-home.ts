/**
 * Config tests' throwaway HERALD_HOME: `load(yaml, env, options)` writes config.yaml (and, with
 * `options.dotenv`, .env) to a fresh folder and loads it as `herald` does; `configError` expects the load to fail with a ConfigError and returns it. The
 * folder is removed after each test. Call once at the top level of a test file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";

export function configHome(prefix: string) {
  let home: string | undefined;
  afterEach(() => {
    if (home) rmSync(home, { recursive: true, force: true });
    home = undefined;
  });
  const load = (
    yaml: string,
    env: Record<string, string> = {},
    {
      dotenv,
      ...options
    }: Omit<NonNullable<Parameters<typeof loadConfig>[0]>, "env"> & { dotenv?: string } = {},
  ) => {
    home = mkdtempSync(join(tmpdir(), prefix));
    writeFileSync(join(home, "config.yaml"), yaml);
    if (dotenv !== undefined) writeFileSync(join(home, ".env"), dotenv);
    return loadConfig({ ...options, env: { HERALD_HOME: home, ...env } });
  };
  const configError = (yaml: string, env: Record<string, string> = {}): ConfigError => {
    try {
      load(yaml, env);
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error("expected a ConfigError");
  };
  /** The folder of the last `load`. */
  const homeDir = () => home!;
  return { load, configError, homeDir };
}
