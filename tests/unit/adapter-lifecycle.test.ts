/**
 * AdapterLifecycle, the start/stop/status and first webhook answers the webhook adapters share: what a
 * platform sees of a stopped, failed or running adapter, and what `/health` reports.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AdapterLifecycle } from "../../adapters/shared/lifecycle.js";
import { serveFile } from "../../adapters/shared/served-files.js";
import type { InboundHandler } from "../../core/types.js";
import { memoryKv } from "../contracts/platform-drivers/memory-kv.js";

const handler: InboundHandler = async () => "accepted";
const post = (url = "https://herald.example.com/webhooks/x") =>
  new Request(url, { method: "POST", body: "{}" });
const ok = async () => new Response("handled");

describe("AdapterLifecycle", () => {
  it("answers 503 before start and after stop, 405 to a GET, and hands a POST on while running", async () => {
    const life = new AdapterLifecycle();
    expect((await life.receive(post(), ok)).status).toBe(503);
    await life.start(handler, async () => {});
    expect(life.status()).toEqual({ state: "running" });
    const get = new Request("https://herald.example.com/webhooks/x");
    expect((await life.receive(get, ok)).status).toBe(405);
    let given: InboundHandler | undefined;
    const res = await life.receive(post(), async (onMessage) => {
      given = onMessage;
      return new Response("handled");
    });
    expect(await res.text()).toBe("handled");
    expect(given).toBe(handler);
    await life.stop();
    expect(life.status()).toEqual({ state: "stopped" });
    expect((await life.receive(post(), ok)).status).toBe(503);
  });

  it("serves a registered file from under the webhook path, stopped or not; an unknown id is 404", async () => {
    const kv = memoryKv();
    const path = join(mkdtempSync(join(tmpdir(), "herald-served-")), "photo.jpg");
    writeFileSync(path, "jpeg bytes");
    const url = serveFile({ path, mimeType: "image/jpeg" }, "https://herald.example.com/webhooks/x", kv);
    const life = new AdapterLifecycle();
    const served = await life.receive(new Request(url), ok, kv);
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(await served.text()).toBe("jpeg bytes");
    const missing = new Request("https://herald.example.com/webhooks/x/media/nope");
    expect((await life.receive(missing, ok, kv)).status).toBe(404);
  });

  it("opens once for overlapping starts; a failed open reports its error and the next start opens again", async () => {
    const life = new AdapterLifecycle();
    let opened = 0;
    const refused = async () => {
      opened++;
      throw new Error("TOKEN was refused: create a new one");
    };
    const first = life.start(handler, refused);
    expect(life.status()).toEqual({ state: "starting" });
    expect(life.start(handler, refused)).toBe(first);
    await expect(first).rejects.toThrow(/TOKEN was refused/);
    expect(opened).toBe(1);
    expect(life.status()).toEqual({ state: "failed", detail: "Error: TOKEN was refused: create a new one" });
    expect(life.onMessage).toBeUndefined();
    await life.start(handler, async () => {
      opened++;
    });
    expect(opened).toBe(2);
    expect(life.status()).toEqual({ state: "running" });
  });
});
