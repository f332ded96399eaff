/** Globs as gitignore and ripgrep read them: `*`, `?`, `[…]`, `**`, `{a,b}`. */

/** Converts a glob to a regular expression source matching a whole `/`-separated path. */
export function globToRegexSource(glob: string): string {
  let out = "";
  let i = 0;
  let braces = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slashAfter = glob[i + 2] === "/";
        out += slashAfter ? "(?:.*/)?" : ".*";
        i += slashAfter ? 3 : 2;
        continue;
      }
      out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) out += "\\[";
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) out += "|";
    else if (c === "\\" && i + 1 < glob.length) {
      out += (glob[i + 1] as string).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      i++;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    i++;
  }
  return out;
}

/**
 * A matcher for a glob against a path relative to the search root: a glob without `/` matches the
 * base name at any depth (`*.ts`), one with `/` the whole relative path (`src/**\/*.ts`).
 */
export function globMatcher(glob: string, ignoreCase = false): (relPath: string) => boolean {
  const anchored = glob.includes("/");
  const re = new RegExp(
    `^${globToRegexSource(anchored ? glob.replace(/^\//, "") : glob)}$`,
    ignoreCase ? "i" : "",
  );
  return (relPath) => re.test(anchored ? relPath : relPath.slice(relPath.lastIndexOf("/") + 1));
}
