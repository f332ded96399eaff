/**
 * A private ngIRCd (Debian's `ngircd`) per test, on a free port of 127.0.0.1 with a generated config,
 * and a minimal raw IRC user client that records what it receives. Nothing runs behind the tests.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net.js";

export interface PrivateIrcd {
  host: string;
  port: number;
  /** A TLS port with a self-signed certificate (with `startNgircd({ tls: true })`). */
  tlsPort?: number | undefined;
  /** Kills the server (connections drop); `start()` brings it back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const NOT_INSTALLED =
  "ngircd is not installed. Run the test command from the README, which installs it (on Debian: apt-get install -y ngircd).";

const running = new Set<ChildProcess>();

function config(port: number, tls?: { port: number; cert: string; key: string }): string {
  const ssl = tls ? `[SSL]\n  CertFile = ${tls.cert}\n  KeyFile = ${tls.key}\n  Ports = ${tls.port}\n` : "";
  return `${ssl}[Global]
  Name = irc.herald.test
  Info = Herald test server
  Listen = 127.0.0.1
  Ports = ${port}
  MotdPhrase = "Herald test"
[Limits]
  MaxConnectionsIP = 0
  MaxNickLength = 30
  # The adapter's own flood control is under test, not the server's read penalties.
  MaxPenaltyTime = 0
[Options]
  PAM = no
  Ident = no
  DNS = no
  RequireAuthPing = no
`;
}

async function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/**
 * Starts ngircd and waits until it accepts connections. With `tls`, a self-signed certificate (made with
 * openssl) serves a second port.
 */
export async function startNgircd(options: { tls?: boolean } = {}): Promise<PrivateIrcd> {
  const dir = mkdtempSync(join(tmpdir(), "herald-ngircd-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  let tls: { port: number; cert: string; key: string } | undefined;
  if (options.tls) {
    tls = { port: await freePort(), cert: join(dir, "cert.pem"), key: join(dir, "key.pem") };
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        tls.key,
        "-out",
        tls.cert,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    // ngircd drops to an unprivileged user before it reads them.
    chmodSync(tls.key, 0o644);
    chmodSync(tls.cert, 0o644);
  }
  const file = join(dir, "ngircd.conf");
  writeFileSync(file, config(port, tls));
  chmodSync(file, 0o644);
  let child: ChildProcess | undefined;
  const launch = async () => {
    const c = spawn("ngircd", ["-n", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
    running.add(c);
    c.once("exit", () => running.delete(c));
    let output = "";
    c.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    c.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    const failed = new Promise<Error>((resolve) => {
      c.once("error", (err: NodeJS.ErrnoException) =>
        resolve(err.code === "ENOENT" ? new Error(NOT_INSTALLED) : err),
      );
      c.once("exit", (code) => resolve(new Error(`ngircd exited with code ${code}: ${output}`)));
    });
    for (let i = 0; i < 200; i++) {
      const failure = await Promise.race([failed, new Promise<undefined>((r) => setTimeout(r, 25))]);
      if (failure) throw failure;
      if (await canConnect(port)) {
        child = c;
        return;
      }
    }
    c.kill("SIGKILL");
    throw new Error(`ngircd did not listen on ${port}: ${output}`);
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once("exit", () => resolve());
      c.kill("SIGKILL");
    });
  };
  await launch();
  return {
    host: "127.0.0.1",
    port,
    tlsPort: tls?.port,
    kill,
    start: launch,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

process.once("exit", () => {
  for (const c of running) c.kill("SIGKILL");
});

/** One line a user received: the sender's nick, the command, its target and text. */
export interface IrcLine {
  raw: string;
  nick: string;
  command: string;
  target: string;
  text: string;
}

/** A person on IRC, on a raw socket: registers, joins, says things and records every line. */
export interface IrcUser {
  nick: string;
  lines: IrcLine[];
  /** PRIVMSGs received from `from` (in `target`, or privately when omitted). */
  messagesFrom(from: string, target?: string): IrcLine[];
  send(line: string): void;
  say(target: string, text: string): void;
  join(channel: string): Promise<void>;
  /** A PING round trip: everything the server relayed to this user before now has arrived after it. */
  sync(): Promise<void>;
  /** Resolves once a line matching `test` arrived (now or later). */
  waitFor(test: (line: IrcLine) => boolean, timeoutMs?: number): Promise<IrcLine>;
  close(): void;
}

function parse(raw: string): IrcLine {
  const noTags = raw.replace(/^@\S+ /, "");
  const m = /^(?::(\S+) )?(\S+)(?: (.*))?$/.exec(noTags);
  const prefix = m?.[1] ?? "";
  const rest = m?.[3] ?? "";
  const colon = rest.startsWith(":") ? 0 : rest.indexOf(" :");
  const middle = colon === -1 ? rest : rest.slice(0, Math.max(colon, 0));
  const text = colon === -1 ? "" : rest.slice(colon === 0 ? 1 : colon + 2);
  return {
    raw,
    nick: prefix.split("!")[0] ?? "",
    command: m?.[2] ?? "",
    target: middle.split(" ")[0] ?? "",
    text,
  };
}

/** Connects a user and waits for registration (001). */
export async function ircUser(ircd: { host: string; port: number }, nick: string): Promise<IrcUser> {
  const socket: Socket = createConnection({ host: ircd.host, port: ircd.port });
  const lines: IrcLine[] = [];
  const waiters = new Set<{ test: (l: IrcLine) => boolean; resolve: (l: IrcLine) => void }>();
  let buffer = "";
  let syncs = 0;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    let at = buffer.indexOf("\r\n");
    while (at !== -1) {
      const raw = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      at = buffer.indexOf("\r\n");
      const line = parse(raw);
      if (line.command === "PING") socket.write(`PONG :${line.text || line.target}\r\n`);
      lines.push(line);
      for (const w of waiters) {
        if (w.test(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  socket.on("error", () => undefined);
  const user: IrcUser = {
    nick,
    lines,
    messagesFrom: (from, target = nick) =>
      lines.filter(
        (l) =>
          l.command === "PRIVMSG" &&
          l.nick.toLowerCase() === from.toLowerCase() &&
          l.target.toLowerCase() === target.toLowerCase(),
      ),
    send: (line) => void socket.write(`${line}\r\n`),
    say: (target, text) => void socket.write(`PRIVMSG ${target} :${text}\r\n`),
    async join(channel) {
      socket.write(`JOIN ${channel}\r\n`);
      await user.waitFor((l) => l.command === "JOIN" && l.nick === nick);
    },
    async sync() {
      const token = `sync-${++syncs}`;
      socket.write(`PING :${token}\r\n`);
      await user.waitFor((l) => l.command === "PONG" && l.text === token);
    },
    waitFor(test, timeoutMs = 10_000) {
      const found = lines.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { test, resolve };
        waiters.add(waiter);
        setTimeout(() => {
          if (waiters.delete(waiter))
            reject(new Error(`no matching IRC line for ${nick} within ${timeoutMs} ms`));
        }, timeoutMs);
      });
    },
    close: () => socket.destroy(),
  };
  socket.write(`NICK ${nick}\r\nUSER ${nick} 0 * :${nick}\r\n`);
  await user.waitFor((l) => l.command === "001");
  return user;
}
