/**
 * A private Dovecot (IMAP + LMTP) for tests: its own config in a temp folder, free ports on 127.0.0.1,
 * plaintext auth, maildir storage. Needs the OS packages `dovecot-imapd` and `dovecot-lmtpd` (the
 * README's test command installs them); without the binary `startDovecot` refuses with that hint.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect as netConnect } from "node:net";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type Mail from "nodemailer/lib/mailer/index.js";
import { freePort } from "./net.js";

export interface DovecotUser {
  name: string;
  password: string;
}

export interface StartDovecotOptions {
  users: DovecotUser[];
  /**
   * Replaces the IMAP CAPABILITY list (e.g. one without IDLE, to test the polling fallback).
   * @defaultValue Dovecot's own list
   */
  imapCapability?: string;
}

export interface Dovecot {
  imapPort: number;
  lmtpPort: number;
  /** The throw-away folder: config, logs, `mail/<user>` maildirs. */
  dir: string;
  /**
   * Delivers a message over LMTP into `to`'s INBOX (`to` is `user@any.domain`; the local part names the
   * Dovecot user), as it stands: Dovecot adds its own trace headers only. `message` is a raw RFC 5322
   * message or nodemailer options; `envelopeFrom` the MAIL FROM (default: the `from` of the options,
   * else sender@example.test). Resolves with the Message-ID as delivered (with angle brackets).
   */
  deliver(message: string | Buffer | Mail.Options, to: string, envelopeFrom?: string): Promise<string>;
  /**
   * Writes a raw message straight into `user`'s maildir, as a local delivery agent does: works while the
   * server is stopped (mail that arrives while IMAP is down).
   */
  deliverOffline(raw: string, user: string): void;
  /** Stops the server (waits for the process to exit) and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops the server (clients see the connection drop) without removing its folder. */
  halt(): Promise<void>;
  /** Starts the server again on the same ports and folder (after `halt`, or stops it first). */
  restart(): Promise<void>;
}

const BINARY_CANDIDATES = ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot", "/usr/bin/dovecot"];
const MISSING =
  "dovecot is not installed: run the README's test command, which installs dovecot-imapd and dovecot-lmtpd (apt-get install -y dovecot-imapd dovecot-lmtpd)";

const LMTP_CANDIDATES = [
  "/usr/lib/dovecot/lmtp",
  "/usr/libexec/dovecot/lmtp",
  "/usr/local/libexec/dovecot/lmtp",
];

function findBinary(): string {
  const found = BINARY_CANDIDATES.find((p) => existsSync(p));
  if (!found) throw new Error(MISSING);
  // dovecot-imapd alone brings the binary but not the LMTP server the helper delivers through.
  if (!LMTP_CANDIDATES.some((p) => existsSync(p))) throw new Error(MISSING);
  return found;
}

function configText(dir: string, imapPort: number, lmtpPort: number, options: StartDovecotOptions): string {
  const asRoot = process.getuid?.() === 0;
  const me = userInfo();
  // As root Dovecot drops to its own users and the `mail` user owns the maildirs; otherwise
  // everything runs as the current user.
  const identity = asRoot
    ? ["mail_uid = mail", "mail_gid = mail", "first_valid_uid = 8"]
    : [
        `mail_uid = ${me.uid}`,
        `mail_gid = ${me.gid}`,
        "first_valid_uid = 0",
        `default_login_user = ${me.username}`,
        `default_internal_user = ${me.username}`,
        `default_internal_group = ${groupName(me.gid)}`,
        // Login processes chroot by default, which needs root.
        "service imap-login {\n  chroot =\n}",
      ];
  return [
    "protocols = imap lmtp",
    "listen = 127.0.0.1",
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `log_path = ${dir}/dovecot.log`,
    "ssl = no",
    "disable_plaintext_auth = no",
    "auth_mechanisms = plain login",
    ...identity,
    `mail_location = maildir:${dir}/mail/%n`,
    "passdb {",
    "  driver = passwd-file",
    `  args = scheme=PLAIN username_format=%n ${dir}/users`,
    "}",
    "userdb {",
    "  driver = static",
    `  args = home=${dir}/mail/%n allow_all_users=yes`,
    "}",
    "service imap-login {",
    "  inet_listener imap {",
    "    address = 127.0.0.1",
    `    port = ${imapPort}`,
    "  }",
    "  inet_listener imaps {",
    "    port = 0",
    "  }",
    "}",
    "service lmtp {",
    "  inet_listener lmtp {",
    "    address = 127.0.0.1",
    `    port = ${lmtpPort}`,
    "  }",
    "}",
    "protocol imap {",
    "  mail_max_userip_connections = 50",
    ...(options.imapCapability ? [`  imap_capability = ${options.imapCapability}`] : []),
    "}",
    "imap_idle_notify_interval = 1 secs",
    "",
  ].join("\n");
}

/** The name of group `gid` (Dovecot wants names), from /etc/group. */
function groupName(gid: number): string {
  const line = readFileSync("/etc/group", "utf8")
    .split("\n")
    .find((l) => l.split(":")[2] === String(gid));
  return line?.split(":")[0] ?? String(gid);
}

/** Resolves once `port` answers with a greeting line, or rejects after `timeoutMs`. */
async function waitForGreeting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = netConnect(port, "127.0.0.1");
      const done = (value: boolean) => {
        socket.destroy();
        resolve(value);
      };
      socket.once("data", () => done(true));
      socket.once("error", () => done(false));
      socket.setTimeout(1000, () => done(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts a private Dovecot. Every user gets an empty INBOX. Stop it with `stop()`.
 * @throws Error naming the README's test command when Dovecot is not installed.
 */
export async function startDovecot(options: StartDovecotOptions): Promise<Dovecot> {
  const binary = findBinary();
  const dir = mkdtempSync(join(tmpdir(), "herald-dovecot-"));
  const [imapPort, lmtpPort] = [await freePort(), await freePort()];
  const asRoot = process.getuid?.() === 0;
  const mailUid = 8; // the `mail` user of Debian-like systems, as in the config above
  // mkdtemp makes the folder private; Dovecot's unprivileged auth and mail processes must read it.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "mail"), { recursive: true });
  if (asRoot) chownSync(join(dir, "mail"), mailUid, mailUid);
  writeFileSync(join(dir, "users"), options.users.map((u) => `${u.name}:{PLAIN}${u.password}\n`).join(""));
  const configPath = join(dir, "dovecot.conf");
  writeFileSync(configPath, configText(dir, imapPort, lmtpPort, options));

  let child: ChildProcess | undefined;
  let removed = false;

  const launch = async () => {
    // Dovecot keeps inherited pipes open: give it no pipes at all. Its own process group lets `halt`
    // end the IMAP processes too: they outlive the master while a client is connected.
    const proc = spawn(binary, ["-F", "-c", configPath], { stdio: "ignore", detached: true });
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once("exit", (code) => reject(new Error(`dovecot exited with code ${code}: ${logTail(dir)}`))),
    );
    exited.catch(() => {});
    await Promise.race([
      Promise.all([waitForGreeting(imapPort, 10_000), waitForGreeting(lmtpPort, 10_000)]),
      exited,
    ]);
  };

  const halt = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const group = -(proc.pid ?? 0);
    await new Promise<void>((resolve) => {
      proc.once("exit", () => resolve());
      signalGroup(group, "SIGTERM");
    });
    signalGroup(group, "SIGKILL");
  };

  const lmtp = nodemailer.createTransport({ lmtp: true, host: "127.0.0.1", port: lmtpPort });

  try {
    await launch();
  } catch (err) {
    await halt();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    imapPort,
    lmtpPort,
    dir,
    async deliver(message, to, sender) {
      const mail: Mail.Options =
        typeof message === "string" || Buffer.isBuffer(message)
          ? { raw: message, envelope: { from: sender ?? "sender@example.test", to } }
          : { ...message, envelope: { from: sender ?? envelopeFrom(message.from), to } };
      const info = await lmtp.sendMail(mail);
      if (info.rejected.length > 0) throw new Error(`dovecot rejected delivery to ${to}: ${info.response}`);
      return info.messageId;
    },
    deliverOffline(raw, user) {
      const box = join(dir, "mail", user);
      for (const sub of ["tmp", "new", "cur"]) mkdirSync(join(box, sub), { recursive: true });
      const name = `${Date.now()}.M${Math.floor(Math.random() * 1e6)}P${process.pid}.${hostname()}`;
      const path = join(box, "new", name);
      writeFileSync(path, raw.replace(/\r?\n/g, "\n"));
      if (asRoot)
        for (const p of [box, join(box, "tmp"), join(box, "new"), join(box, "cur"), path]) {
          chownSync(p, mailUid, mailUid);
        }
    },
    halt,
    async restart() {
      await halt();
      await launch();
    },
    async stop() {
      await halt();
      lmtp.close();
      if (!removed) {
        removed = true;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Signals a process group; a group already gone is fine. */
function signalGroup(group: number, signal: NodeJS.Signals): void {
  if (group >= 0) return;
  try {
    process.kill(group, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

function envelopeFrom(from: unknown): string {
  if (typeof from === "string") return /<([^>]+)>/.exec(from)?.[1] ?? from;
  if (Array.isArray(from)) return envelopeFrom(from[0]);
  if (from && typeof from === "object" && "address" in from) return String(from.address);
  return "sender@example.test";
}

function logTail(dir: string): string {
  try {
    return readFileSync(join(dir, "dovecot.log"), "utf8").split("\n").slice(-5).join(" | ");
  } catch {
    return "(no log)";
  }
}
