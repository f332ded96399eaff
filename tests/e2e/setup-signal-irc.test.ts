/**
 * `herald setup --non-interactive` for Signal (listGroups on the fake signal-cli daemon) and IRC (a
 * connection to a private ngIRCd), each with a working and a wrong setting.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { BOT_NUMBER, type FakeSignal, startFakeSignal } from "../fakes/signal/index.js";
import { freePort } from "../helpers/net.js";
import { type PrivateIrcd, startNgircd } from "../helpers/ngircd.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let signal: FakeSignal;
let ircd: PrivateIrcd;
beforeAll(async () => {
  [signal, ircd] = await Promise.all([startFakeSignal(), startNgircd()]);
});
afterAll(async () => {
  await Promise.all([signal?.close(), ircd?.stop()]);
});

const setup = nonInteractiveSetup("si");

describe("herald setup for Signal and IRC", () => {
  it("checks each live, shows the Signal linking steps and writes their settings", async () => {
    const run = await setup([
      "--signal-account",
      BOT_NUMBER,
      "--signal-http-url",
      signal.url,
      "--signal-owner",
      "+4917000000001",
      "--irc-server",
      ircd.host,
      "--irc-port",
      String(ircd.port),
      "--irc-tls",
      "false",
      "--irc-nick",
      "heraldbot",
      "--irc-channels",
      "#herald,#ops",
      "--irc-owner",
      "alice!~alice@127.0.0.1",
    ]);
    expect(run.out).toContain("signal-cli link -n herald");
    expect(run.out).toContain(`Signal: ${BOT_NUMBER}`);
    expect(run.out).toContain(`IRC server ${ircd.host}:${ircd.port} answers`);
    expect(run.code).toBe(0);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["signal"]).toMatchObject({
      account: BOT_NUMBER,
      http_url: signal.url,
      allowed_users: ["+4917000000001"],
    });
    expect(config["irc"]).toMatchObject({
      server: ircd.host,
      port: ircd.port,
      tls: false,
      nick: "heraldbot",
      channels: ["#herald", "#ops"],
      allowed_users: ["alice!~alice@127.0.0.1"],
    });
  });

  it("refuses a signal-cli that does not answer and an IRC port with no server, and writes nothing", async () => {
    const closed = await freePort();
    const badSignal = await setup([
      "--signal-account",
      BOT_NUMBER,
      "--signal-http-url",
      `http://127.0.0.1:${closed}`,
    ]);
    expect(badSignal.code).toBe(1);
    expect(badSignal.out).toMatch(/Cannot reach signal-cli's daemon/);
    expect(existsSync(join(badSignal.home, "config.yaml"))).toBe(false);

    const badIrc = await setup([
      "--irc-server",
      "127.0.0.1",
      "--irc-port",
      String(closed),
      "--irc-tls",
      "false",
    ]);
    expect(badIrc.code).toBe(1);
    expect(badIrc.out).toMatch(/Cannot connect to the IRC server 127\.0\.0\.1:\d+: ECONNREFUSED/);
    expect(existsSync(join(badIrc.home, "config.yaml"))).toBe(false);
  });
});
