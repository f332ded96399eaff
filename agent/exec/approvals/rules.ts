/**
 * The table of dangerous commands. Order matters: the first rule that matches names the danger, so the
 * specific rules come before `privilege-escalation` (`sudo rm -rf /` is reported as the delete), and
 * the rules for what cannot be read come last.
 */
import { hasFlag, operandsOf, optionsOf, writeTargets } from "./args.js";
import { readsProgramFromStdin, runsCode } from "./interpreters.js";
import { FROM_INPUT } from "./nested-code.js";
import { OPAQUE_RULES } from "./opaque.js";
import { fromCwd, isDangerousDevice, isSystemPath, placeOf } from "./paths.js";
import type { Script } from "./shell-parse.js";
import type { CommandView, DangerRule, RuleContext } from "./types.js";
import { allViews, commandName } from "./views.js";

const FETCHERS = /^(curl|wget|fetch|http|https|xh|aria2c|nc|ncat|netcat|socat|lwp-request|ftp|tftp)$/;
/** Database clients by base name. */
export const SQL_CLIENTS = /^(psql|mysql|mariadb|sqlite3|sqlcmd|clickhouse-client|duckdb|pgcli|mycli|usql)$/;
const SQL_CLIENT_WORD =
  /(^|[\s/])(psql|mysql|mariadb|sqlite3|sqlcmd|clickhouse-client|duckdb|pgcli|mycli|usql)(\s|$)/;
/** Commands that run a command elsewhere (a container, a pod, another host). */
export const REMOTE_RUNNERS = /^(docker|podman|nerdctl|kubectl|oc|ssh)$/;
/** SQL that drops or empties a table, database or schema. */
export const DESTRUCTIVE_SQL = /\b(drop\s+(table|database|schema)\b|truncate\s+(table\s+)?[\w."`[]+)/i;
const DISK_TOOLS =
  /^(mkfs(\..+)?|mke2fs|mkswap|mkntfs|mkdosfs|newfs(_.+)?|fdisk|sfdisk|cfdisk|gdisk|sgdisk|cgdisk|parted|wipefs|blkdiscard|pvremove|vgremove|lvremove)$/;

function deletesOutside(view: CommandView, ctx: RuleContext): boolean {
  if (view.name === "rm") {
    if (view.args.includes("--no-preserve-root")) return true;
    // An unquoted expansion may bring its own options: `a="-rf /x"; rm $a`.
    const unknownOptions = view.words.some((w) => w.splits && w.text !== FROM_INPUT);
    if (!unknownOptions && !hasFlag(view.args, "r", "--recursive") && !hasFlag(view.args, "R")) return false;
    return operandsOf(view.args).some((p) => placeOf(p, ctx.workspaceDir, view.cwd) !== "inside");
  }
  if (view.name === "find" && view.args.includes("-delete")) {
    const starts: string[] = [];
    for (const a of view.args) {
      if (a.startsWith("-") || a === "(" || a === "!") break;
      starts.push(a);
    }
    return starts.some((p) => ["outside", "unknown"].includes(placeOf(p, ctx.workspaceDir, view.cwd)));
  }
  return false;
}

/** `fdisk -l`, `parted -l`, `parted DEV print`, `sgdisk -p`, `wipefs DEV` only read. */
function diskToolWrites(view: CommandView): boolean {
  const { name, args } = view;
  if (name === "wipefs") return hasFlag(args, "a", "--all") || hasFlag(args, "o", "--offset");
  if (/^(fdisk|sfdisk|gdisk|parted)$/.test(name) && (args.includes("-l") || args.includes("--list")))
    return false;
  if (name === "parted" && operandsOf(args).includes("print")) return false;
  if (name === "sgdisk" && args.length > 0 && args.every((a) => /^(-p|--print|\/dev\/.*)$/.test(a)))
    return false;
  return true;
}

function formatsDisk(view: CommandView): boolean {
  if (DISK_TOOLS.test(view.name)) return diskToolWrites(view);
  const sub = operandsOf(view.args)[0] ?? "";
  if (view.name === "diskutil") return /^(erase|partition|zero|random|secureerase|reformat)/i.test(sub);
  if (view.name === "zpool" || view.name === "zfs") return sub === "destroy";
  return false;
}

function scriptFetches(script: Script): boolean {
  return allViews(script).some((v) => FETCHERS.test(v.name));
}

function pipesNetworkToShell(view: CommandView): boolean {
  const interpreter = runsCode(view.name);
  if (!interpreter && !["source", ".", "eval"].includes(view.name)) return false;
  if (view.words.some((w) => w.subs.some(scriptFetches))) return true;
  if (view.redirects.some((r) => (r.op === "<" || r.op === "<<<") && r.target.subs.some(scriptFetches)))
    return true;
  return interpreter && readsProgramFromStdin(view) && view.upstream.some((u) => FETCHERS.test(u.name));
}

function dropsSql(view: CommandView): boolean {
  const client =
    SQL_CLIENTS.test(view.name) ||
    (REMOTE_RUNNERS.test(view.name) &&
      view.args.some((a) => SQL_CLIENT_WORD.test(a) || SQL_CLIENTS.test(commandName(a))));
  if (!client) return false;
  const texts = [
    ...view.args,
    ...view.redirects.flatMap((r) =>
      r.op === "<<<" ? [r.target.text] : r.body !== undefined ? [r.body] : [],
    ),
    ...view.upstream.flatMap((u) => [...u.args, ...u.redirects.flatMap((r) => (r.body ? [r.body] : []))]),
  ];
  // `-e"DROP …"` arrives as one word: look past an attached short option.
  return texts.some((t) => DESTRUCTIVE_SQL.test(t.replace(/^-[a-zA-Z]/, "")));
}

function changesPowerState(view: CommandView): boolean {
  const { name, args } = view;
  if (/^(shutdown|reboot|halt|poweroff)$/.test(name)) return !(name === "shutdown" && args.includes("-c"));
  const first = operandsOf(args)[0] ?? "";
  if (name === "init" || name === "telinit") return first === "0" || first === "6";
  if (name === "systemctl" || name === "loginctl")
    return /^(poweroff|reboot|halt|kexec|suspend|hibernate|hybrid-sleep|suspend-then-hibernate|rescue|emergency)$/.test(
      first,
    );
  return false;
}

function killsEverything(view: CommandView): boolean {
  if (view.name === "killall" || view.name === "killall5") return true;
  if (view.name !== "kill") return false;
  const args = view.args;
  let k = 0;
  if (args[k] === "-s" || args[k] === "-n") k += 2;
  else if (args[k]?.startsWith("-") && args[k] !== "--" && args.length > 1) k++;
  if (args[k] === "--") k++;
  return args.slice(k).includes("-1");
}

function flushesFirewall(view: CommandView): boolean {
  const { name, args } = view;
  if (/^ip6?tables(-legacy|-nft)?$/.test(name))
    return args.some((a) => a === "--flush" || /^-[a-zA-Z]*F$/.test(a));
  if (name === "nft") return args.includes("flush") && args.includes("ruleset");
  if (name === "ufw") return /^(disable|reset)$/.test(operandsOf(args)[0] ?? "");
  if (name === "pfctl") return args.some((a) => /^-(F|d)$/.test(a));
  return false;
}

function changesPermissions(view: CommandView, ctx: RuleContext): boolean {
  if (!/^(chmod|chown|chgrp)$/.test(view.name)) return false;
  const ops = operandsOf(view.args);
  const targets = view.args.some((a) => a.startsWith("--reference")) ? ops : ops.slice(1);
  if (targets.some((p) => isSystemPath(fromCwd(p, view.cwd)))) return true;
  const recursive = hasFlag(view.args, "R", "--recursive");
  return (
    recursive && targets.some((p) => ["outside", "unknown"].includes(placeOf(p, ctx.workspaceDir, view.cwd)))
  );
}

const GIT_GLOBAL_WITH_ARG = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);

function rewritesRemote(view: CommandView): boolean {
  if (view.name !== "git") return false;
  let k = 0;
  while (k < view.args.length && view.args[k]?.startsWith("-"))
    k += GIT_GLOBAL_WITH_ARG.has(view.args[k] ?? "") ? 2 : 1;
  if (view.args[k] !== "push") return false;
  const rest = view.args.slice(k + 1);
  const risky = /^(--force|--force-with-lease(=.*)?|--mirror|--delete|--prune|-[a-zA-Z]*[fd][a-zA-Z]*)$/;
  if (optionsOf(rest).some((o) => risky.test(o))) return true;
  return operandsOf(rest)
    .slice(1)
    .some((r) => r.startsWith("+") || r.startsWith(":"));
}

/** The rules, in the order they are tried. */
export const RULES: readonly DangerRule[] = [
  {
    id: "fork-bomb",
    description: "a fork bomb: a function that calls itself twice in the background until the machine hangs",
    matchRaw: (command) =>
      /(?:^|[\s;&|(])(?:function\s+)?([\w:.-]+)\s*(?:\(\s*\))?\s*\{\s*\1\s*\|\s*\1\s*&/.test(command) ||
      /\bfork\s+while\s+fork\b|\bwhile\s*\(\s*1\s*\)\s*\{?\s*fork\b|os\.fork\(\)\s+while|while\s+True:\s*os\.fork/.test(
        command,
      ),
  },
  {
    id: "recursive-delete-outside-workspace",
    description:
      "recursive delete of /, the home directory, the workspace itself or a path outside the workspace",
    match: deletesOutside,
  },
  {
    id: "disk-format",
    description:
      "formats, partitions or wipes a disk (mkfs, fdisk, parted, wipefs, diskutil erase, zpool destroy)",
    match: formatsDisk,
  },
  {
    id: "block-device-write",
    description:
      "writes straight to a disk or memory device (dd of=/dev/sda, > /dev/nvme0n1, shred /dev/sdb)",
    match: (view) => writeTargets(view).some((p) => isDangerousDevice(fromCwd(p, view.cwd))),
  },
  {
    id: "network-pipe-to-shell",
    description:
      'runs code downloaded from the network unseen (curl … | sh, bash <(wget …), eval "$(curl …)")',
    match: pipesNetworkToShell,
  },
  {
    id: "sql-destructive",
    description: "DROP TABLE, DROP DATABASE, DROP SCHEMA or TRUNCATE sent to a database client",
    match: dropsSql,
  },
  {
    id: "power-state",
    description: "shuts down, reboots or suspends the machine (shutdown, reboot, init 0, systemctl poweroff)",
    match: changesPowerState,
  },
  {
    id: "kill-all-processes",
    description: "kills every process the user can reach (kill -9 -1, killall)",
    match: killsEverything,
  },
  {
    id: "crontab-remove",
    description: "deletes the user's whole crontab (crontab -r)",
    match: (view) => view.name === "crontab" && view.args.some((a) => /^-[a-zA-Z]*r/.test(a)),
  },
  {
    id: "firewall-flush",
    description: "flushes or disables the firewall (iptables -F, nft flush ruleset, ufw disable)",
    match: flushesFirewall,
  },
  {
    id: "chattr",
    description:
      "changes file attributes with chattr (immutable or append-only files resist deletion and edits)",
    match: (view) => view.name === "chattr",
  },
  {
    id: "permission-change-system",
    description:
      "changes owner or mode of system paths, or recursively outside the workspace (chmod -R 777 /)",
    match: changesPermissions,
  },
  {
    id: "system-path-write",
    description:
      "writes, moves or deletes files under /, /etc, /usr, /bin, /boot, /var and other system paths",
    match: (view) => writeTargets(view).some((p) => isSystemPath(fromCwd(p, view.cwd))),
  },
  {
    id: "git-push-rewrite",
    description:
      "rewrites or deletes remote git history (push --force, --force-with-lease, +refspec, --delete, --mirror)",
    match: rewritesRemote,
  },
  {
    id: "privilege-escalation",
    description: "runs a command as another user or root (sudo, su, doas, pkexec)",
    match: (view) => /^(sudo|sudoedit|su|doas|pkexec|runuser)$/.test(view.name),
  },
  ...OPAQUE_RULES,
];

/** The rule reported when a command cannot be parsed far enough to be checked. */
export const UNPARSEABLE_RULE: DangerRule = {
  id: "unparseable-command",
  description: "too deeply nested or too long to check automatically; read it before approving",
};
