/**
 * Where a skill comes from, as `herald skills install` takes it: a folder on this machine, a git
 * repository (`https://…`, `ssh://…`, `git@host:…`, `file://…`; `#ref` picks a branch or tag, `//path`
 * after `.git` a folder in it), an https (or http) URL of a `.zip`, `.tar.gz` or `.tgz` archive, or
 * GitHub's short form `owner/repo[/path][@ref]`.
 */
import { existsSync } from "node:fs";

/** A parsed source. `path` is the skill's folder inside the repository or archive. */
export type RemoteSource =
  | { kind: "local"; dir: string }
  | { kind: "git"; url: string; ref?: string | undefined; path?: string | undefined }
  | { kind: "archive"; url: string; format: "zip" | "tar.gz"; path?: string | undefined };

const ARCHIVE = /\.(zip|tar\.gz|tgz)$/i;
const SHORT =
  /^([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})((?:\/[A-Za-z0-9._-]+)*)(?:@([A-Za-z0-9._/-]+))?$/;
const REF = /^[A-Za-z0-9._/-]{1,200}$/;

function cleanPath(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const trimmed = path.replace(/^\/+|\/+$/g, "");
  if (!trimmed) return undefined;
  if (trimmed.split("/").some((p) => p === ".." || p === "." || p === ""))
    throw new Error(`the path ${path} leaves the repository; give a folder inside it`);
  return trimmed;
}

/**
 * Parses `spec`. A spec naming an existing folder is local; otherwise it must be one of the remote forms.
 * @throws Error saying which forms are accepted
 */
export function parseSkillSource(spec: string): RemoteSource {
  if (existsSync(spec)) return { kind: "local", dir: spec };
  const [base = "", fragment] = spec.split("#", 2);
  if (/^(https?):\/\//i.test(base) && ARCHIVE.test(new URL(base).pathname)) {
    const format = /\.zip$/i.test(new URL(base).pathname) ? "zip" : "tar.gz";
    return { kind: "archive", url: base, format, path: cleanPath(fragment) };
  }
  if (/^(https?|ssh|git|file):\/\//i.test(base) || /^[\w.-]+@[\w.-]+:/.test(base)) {
    // `https://host/repo.git//skills/x#v1`: the folder after `.git//`, the ref after `#`.
    const split = /^(.*?\.git)\/\/(.+)$/.exec(base);
    if (fragment !== undefined && !REF.test(fragment))
      throw new Error(`#${fragment} is not a branch or tag name`);
    return { kind: "git", url: split?.[1] ?? base, ref: fragment || undefined, path: cleanPath(split?.[2]) };
  }
  const short = SHORT.exec(spec);
  if (short) {
    const [, owner, repo, path, ref] = short;
    return { kind: "git", url: `https://github.com/${owner}/${repo}.git`, ref, path: cleanPath(path) };
  }
  throw new Error(
    `${spec} is not a folder here, a git URL (https://…/repo.git, git@host:repo.git, file://…), an https URL of a .zip or .tar.gz, nor owner/repo[/path][@ref]`,
  );
}

/** The source as `herald skills update` fetches it again (the recorded form). */
export function describeSource(source: Exclude<RemoteSource, { kind: "local" }>): string {
  const where = source.path ? ` (${source.path})` : "";
  return source.kind === "git"
    ? `${source.url}${source.ref ? `#${source.ref}` : ""}${where}`
    : `${source.url}${where}`;
}
