/**
 * `herald whatsapp link|unlink` at the function level (the commands are thin wrappers): linking by
 * pairing code or QR against the fake socket, unlinking with and without a reachable WhatsApp.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasLinkedCreds } from "../../adapters/whatsapp/auth-state.js";
import { linkWhatsApp, normalisePhone, unlinkWhatsApp } from "../../adapters/whatsapp/link.js";
import { registerWhatsAppCommands } from "../../app/cli/whatsapp.js";
import { silentLogger } from "../../core/logger.js";
import { FakeWhatsApp, seedLinkedCreds } from "../fakes/whatsapp/index.js";

let home: string;
let authDir: string;
let fake: FakeWhatsApp;
const logger = silentLogger();

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "herald-wa-cli-"));
  authDir = join(home, "whatsapp");
  fake = new FakeWhatsApp();
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe("herald whatsapp unlink", () => {
  it("logs the device out on WhatsApp, then deletes the credentials and keys", async () => {
    await seedLinkedCreds(authDir);
    expect(hasLinkedCreds(authDir)).toBe(true);
    const result = await unlinkWhatsApp({ authDir, logger, socketFactory: fake.factory });
    expect(result).toEqual({ status: "logged-out" });
    expect(fake.sockets[0]?.loggedOut).toBe(true);
    expect(existsSync(authDir)).toBe(false);
  });

  it("still deletes the credentials when WhatsApp cannot be reached, and says the phone may list the device", async () => {
    await seedLinkedCreds(authDir);
    fake.script.push("hang");
    const result = await unlinkWhatsApp({ authDir, logger, socketFactory: fake.factory, timeoutMs: 200 });
    expect(result).toEqual({ status: "deleted-offline", reason: "WhatsApp could not be reached" });
    expect(existsSync(authDir)).toBe(false);
    expect(fake.sockets[0]?.ended).toBe(true);
  });

  it("has nothing to do when not linked", async () => {
    expect(await unlinkWhatsApp({ authDir, logger, socketFactory: fake.factory })).toEqual({
      status: "not-linked",
    });
    expect(fake.sockets).toHaveLength(0);
  });
});

describe("herald whatsapp link", () => {
  it("--phone asks for a pairing code instead of a QR and finishes when the phone entered it", async () => {
    const codes: string[] = [];
    const qrs: string[] = [];
    const linking = linkWhatsApp({
      authDir,
      phone: "+1 (555) 000-1111",
      logger,
      socketFactory: fake.factory,
      onQr: (qr) => qrs.push(qr),
      onPairingCode: (code) => codes.push(code),
      backoff: { baseMs: 1 },
    });
    await fake.waitFor(() => codes.length === 1, "the pairing code");
    expect(fake.current.pairingRequests).toEqual(["15550001111"]);
    expect(codes).toEqual(["K7XR2M9P"]);
    expect(qrs).toEqual([]);
    await fake.current.scan();
    expect(await linking).toEqual({ status: "linked", user: "+15550001111" });
    expect(hasLinkedCreds(authDir)).toBe(true);
    expect(fake.sockets.every((s) => s.ended)).toBe(true);
  });

  it("shows a QR code without --phone, and reports an existing link instead of replacing it", async () => {
    const qrs: string[] = [];
    const linking = linkWhatsApp({
      authDir,
      logger,
      socketFactory: fake.factory,
      onQr: (qr) => qrs.push(qr),
      onPairingCode: () => undefined,
      backoff: { baseMs: 1 },
    });
    await fake.waitFor(() => qrs.length === 1, "the QR code");
    await fake.current.scan();
    await linking;
    const again = await linkWhatsApp({
      authDir,
      logger,
      socketFactory: fake.factory,
      onQr: () => undefined,
      onPairingCode: () => undefined,
    });
    expect(again).toEqual({ status: "already-linked", user: "+15550001111" });
  });

  it("rejects a phone number that is not in international format", () => {
    expect(() => normalisePhone("call me")).toThrow(/international format/);
    expect(normalisePhone("0044 20 7946 0000")).toBe("442079460000");
  });
});

describe("registerWhatsAppCommands", () => {
  it("adds `whatsapp link --phone` and `whatsapp unlink` to the program", () => {
    const program = new Command();
    registerWhatsAppCommands(program);
    const whatsapp = program.commands.find((c) => c.name() === "whatsapp");
    expect(whatsapp?.commands.map((c) => c.name())).toEqual(["link", "unlink"]);
    expect(whatsapp?.commands[0]?.options.map((o) => o.long)).toEqual(["--phone"]);
  });
});
