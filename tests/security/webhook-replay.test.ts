/**
 * Replaying a captured webhook delivery under another delivery id, over HTTP to the real route of a
 * whole gateway. The id header is not signed, so it cannot make a delivery new: the replay record is
 * the signed timestamp and the body (plus the id when one is sent). The same body inside the window is
 * refused whatever the id says, also after a restart; a sender's retry under the same id is refused
 * even when signed anew; the same body signed at a new time is a new delivery.
 */
import { describe, expect, it, vi } from "vitest";
import { signatureOf } from "../../adapters/webhooks/index.js";
import { botReplies } from "../e2e/telegram-helpers.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";

const SECRET = "deploy-secret-0123456789abcdef";
const TOKEN = "forms-token-0123456789abcdef";
const CHAT = 111;
const running = platformPerTest<FakeTelegram>();

const CONFIG = `
webhooks:
  - name: deploys
    auth: { type: hmac, header: X-Signature-256, secret_env: DEPLOY_SECRET, timestamp_header: X-Timestamp }
    id_header: X-Delivery-Id
    prompt: "Deployed {{service}}"
    deliver: telegram:${CHAT}
  - name: forms
    auth: { type: bearer, token_env: FORMS_TOKEN }
    id_header: X-Delivery-Id
    prompt: "New form entry from {{email}}"
    deliver: telegram:${CHAT}
`;

async function start(): Promise<{ fake: FakeTelegram; h: Harness }> {
  const fake = running.trackFake(await startFakeTelegram());
  const h = await running.startHarness({
    configYaml: CONFIG,
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: String(CHAT),
      DEPLOY_SECRET: SECRET,
      FORMS_TOKEN: TOKEN,
    },
  });
  return { fake, h };
}

const body = JSON.stringify({ service: "billing", version: "4.2.0" });
const now = () => Math.floor(Date.now() / 1000);

/** The headers a sender signs a delivery with, at `at` (Unix seconds), under delivery id `id`. */
function signed(at: number, id?: string): Record<string, string> {
  const ts = String(at);
  return {
    "content-type": "application/json",
    "x-timestamp": ts,
    "x-signature-256": `sha256=${signatureOf(SECRET, Buffer.from(body), ts)}`,
    ...(id ? { "x-delivery-id": id } : {}),
  };
}

async function post(h: Harness, name: string, headers: Record<string, string>, text = body) {
  const res = await fetch(`${h.apiUrl}/webhooks/in/${name}`, { method: "POST", headers, body: text });
  return { status: res.status, error: ((await res.json()) as { error?: string }).error ?? "" };
}

describe("webhook replay under a new delivery id", () => {
  it("refuses the same signed body under another id or none, also after a restart", async () => {
    const { fake, h } = await start();
    const at = now();
    expect((await post(h, "deploys", signed(at, "d-1"))).status).toBe(202);
    await botReplies(fake, CHAT, 1);

    const renamed = await post(h, "deploys", signed(at, "d-2"));
    expect(renamed.status).toBe(409);
    expect(renamed.error).toContain("already received");
    expect((await post(h, "deploys", signed(at))).status).toBe(409);
    await h.restart();
    expect((await post(h, "deploys", signed(at, "d-3"))).status).toBe(409);

    await h.gateway.runner.outbox.idle();
    expect(fake.botMessages(CHAT)).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("refuses a retry under the same id signed anew; takes the same body signed later as a new delivery", async () => {
    const { fake, h } = await start();
    const at = now();
    expect((await post(h, "deploys", signed(at, "d-1"))).status).toBe(202);
    const retry = await post(h, "deploys", signed(at + 1, "d-1"));
    expect(retry.status).toBe(409);
    expect(retry.error).toBe("this delivery id was already received");
    expect((await post(h, "deploys", signed(at + 2, "d-2"))).status).toBe(202);
    expect(await botReplies(fake, CHAT, 2)).toHaveLength(2);
    await vi.waitFor(() => expect(h.llm.requests).toHaveLength(2));
  });

  it("a bearer route (nothing signed): the same body under a new id is a replay", async () => {
    const { fake, h } = await start();
    const form = JSON.stringify({ email: "ann@example.com" });
    const headers = (id: string) => ({
      "content-type": "application/json",
      authorization: `Bearer ${TOKEN}`,
      "x-delivery-id": id,
    });
    expect((await post(h, "forms", headers("f-1"), form)).status).toBe(202);
    expect((await post(h, "forms", headers("f-2"), form)).status).toBe(409);
    await botReplies(fake, CHAT, 1);
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessages(CHAT)).toHaveLength(1);
  });
});
