/**
 * The two files `herald setup` edits, held in memory until `commit()`: `config.yaml` as a YAML document
 * (comments, order and keys the wizard does not touch stay as they were) and `.env` as its lines (only
 * the variables set are replaced or added). `commit()` writes each to a temp file and renames it over
 * the old one, so an interrupted setup leaves both files as they were; `.env` is mode 0600.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { Document, isMap, parseDocument } from "yaml";
import type { SetupFiles } from "../../core/setup.js";

/** Opens HERALD_HOME's config.yaml and .env (either may be missing). */
export function openSetupFiles(homeDir: string): SetupFiles {
  const configPath = join(homeDir, "config.yaml");
  const envPath = join(homeDir, ".env");
  const doc = existsSync(configPath) ? parseDocument(readFileSync(configPath, "utf8")) : new Document({});
  if (doc.errors.length) {
    throw new Error(
      `${configPath} is not valid YAML (${doc.errors[0]?.message}); fix it before running setup.`,
    );
  }
  if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as typeof doc.contents;
  const envText = existsSync(envPath) ? readFileSync(envPath, "utf8") : "";
  const envLines = envText ? envText.replace(/\n$/, "").split("\n") : [];
  const envValues: Record<string, string> = parseDotenv(envText);
  const changed = new Set<string>();
  const split = (path: string) => path.split(".");

  return {
    get: (path) => {
      const value = doc.getIn(split(path));
      return value && typeof value === "object" && "toJSON" in value
        ? (value as { toJSON(): unknown }).toJSON()
        : value;
    },
    set(path, value) {
      if (JSON.stringify(this.get(path)) === JSON.stringify(value)) return;
      doc.setIn(split(path), value);
      changed.add(path);
    },
    addToList(path, values) {
      const current = this.get(path);
      const list = Array.isArray(current) ? current.map(String) : [];
      const merged = [...list, ...values.filter((v) => !list.includes(v))];
      if (merged.length !== list.length) this.set(path, merged);
    },
    env: (name) => envValues[name],
    setEnv(name, value) {
      const line = `${name}=${quoteEnv(value)}`;
      const at = envLines.findIndex((l) => new RegExp(`^\\s*(export\\s+)?${name}\\s*=`).test(l));
      if (at >= 0) envLines[at] = line;
      else envLines.push(line);
      envValues[name] = value;
      changed.add(name);
    },
    changes: () => [...changed],
    commit() {
      mkdirSync(homeDir, { recursive: true });
      const suffix = `.setup-${process.pid}`;
      writeFileSync(`${configPath}${suffix}`, String(doc), { mode: 0o600 });
      writeFileSync(`${envPath}${suffix}`, envLines.length ? `${envLines.join("\n")}\n` : "", {
        mode: 0o600,
      });
      chmodSync(`${envPath}${suffix}`, 0o600);
      renameSync(`${configPath}${suffix}`, configPath);
      renameSync(`${envPath}${suffix}`, envPath);
      return { configPath, envPath };
    },
  };
}

/** A value as dotenv reads it back: bare when plain, else single-quoted (taken literally). */
function quoteEnv(value: string): string {
  if (/^[A-Za-z0-9_./:@+,=-]*$/.test(value)) return value;
  if (/['\n]/.test(value))
    throw new Error(
      "A value with a quote or a line break cannot go in .env; set it in the environment instead.",
    );
  return `'${value}'`;
}
