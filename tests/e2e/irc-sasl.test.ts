/**
 * SASL PLAIN on IRC (ngIRCd has no SASL): a small fake server on 127.0.0.1 that negotiates the `sasl`
 * capability like Libera or OFTC, checks the PLAIN credentials, and answers 903 or 904.
 */
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createIrcAdapter, type IrcAdapter } from "../../adapters/irc/index.js";
import { silentLogger } from "../../core/logger.js";
import { memoryKv } from "../contracts/platform-drivers/memory-kv.js";

interface FakeSaslServer {
  port: number;
  logins: string[];
  close(): Promise<void>;
}

async function fakeSaslServer(account: string, password: string): Promise<FakeSaslServer> {
  const logins: string[] = [];
  const server: Server = createServer((socket) => {
    let buffer = "";
    let nick = "*";
    socket.setEncoding("utf8");
    const send = (line: string) => socket.write(`:irc.fake.test ${line}\r\n`);
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      let at = buffer.indexOf("\r\n");
      while (at !== -1) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        at = buffer.indexOf("\r\n");
        const [command, ...args] = line.split(" ");
        if (command === "CAP" && args[0] === "LS") send(`CAP ${nick} LS :sasl=PLAIN multi-prefix`);
        else if (command === "CAP" && args[0] === "REQ")
          send(`CAP ${nick} ACK :${line.split(" :")[1] ?? ""}`);
        else if (command === "NICK") nick = args[0] ?? nick;
        else if (command === "AUTHENTICATE" && args[0] === "PLAIN") socket.write("AUTHENTICATE +\r\n");
        else if (command === "AUTHENTICATE") {
          const decoded = Buffer.from(args[0] ?? "", "base64").toString("utf8");
          logins.push(decoded);
          if (decoded === `${account}\0${account}\0${password}`) {
            send(`900 ${nick} ${nick}!u@h ${account} :You are now logged in as ${account}`);
            send(`903 ${nick} :SASL authentication successful`);
          } else send(`904 ${nick} :SASL authentication failed`);
        } else if (command === "CAP" && args[0] === "END") {
          send(`001 ${nick} :Welcome`);
          send(`376 ${nick} :End of MOTD`);
        } else if (command === "PING") send(`PONG irc.fake.test :${line.split(" :")[1] ?? args[0]}`);
        else if (command === "QUIT") socket.end();
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    logins,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
      }),
  };
}

const adapters: IrcAdapter[] = [];
const servers: FakeSaslServer[] = [];
afterEach(async () => {
  for (const a of adapters.splice(0)) await a.stop();
  for (const s of servers.splice(0)) await s.close();
});

function adapter(port: number, password: string): IrcAdapter {
  const a = createIrcAdapter(
    {
      server: "127.0.0.1",
      port,
      tls: false,
      nick: "herald",
      channels: [],
      sasl: { account: "heraldbot", password },
    },
    {
      logger: silentLogger(),
      homeDir: tmpdir(),
      cacheDir: mkdtempSync(join(tmpdir(), "irc-")),
      kv: memoryKv(),
    },
  );
  adapters.push(a);
  return a;
}

describe("irc SASL PLAIN", () => {
  it("logs in with the account and password before registering", async () => {
    const server = await fakeSaslServer("heraldbot", "s3cret-pass");
    servers.push(server);
    const a = adapter(server.port, "s3cret-pass");
    await a.start(async () => "accepted");
    expect(a.status().state).toBe("running");
    expect(server.logins).toEqual(["heraldbot\0heraldbot\0s3cret-pass"]);
  });

  it("a refused login fails start with an error naming the settings to fix", async () => {
    const server = await fakeSaslServer("heraldbot", "s3cret-pass");
    servers.push(server);
    const a = adapter(server.port, "wrong-pass");
    await expect(a.start(async () => "accepted")).rejects.toMatchObject({
      code: "platform_auth_failed",
      message: expect.stringMatching(/IRC_SASL_ACCOUNT and IRC_SASL_PASSWORD/),
    });
  });
});
