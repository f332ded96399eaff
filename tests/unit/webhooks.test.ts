/**
 * Inbound webhook pieces without a gateway: config errors name the key and the fix, and a refused
 * delivery is logged by reason with nothing of its body or signature.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createInboundWebhookRoute, resolveWebhooks, webhooksSchema } from "../../adapters/webhooks/index.js";
import { createLogger } from "../../core/logger.js";

const route = (auth: Record<string, unknown>) =>
  webhooksSchema.parse([{ name: "ci", auth, prompt: "p {{a}}", deliver: "telegram" }]);

describe("webhook config", () => {
  it("names the unset secret variable and the config key", () => {
    expect(() => resolveWebhooks(route({ type: "hmac", secretEnv: "CI_SECRET" }), {})).toThrow(
      /CI_SECRET \(config\.yaml: webhooks\.0\.auth\.secret_env\), which is not set\. Fix:/,
    );
    expect(() => resolveWebhooks(route({ type: "bearer", tokenEnv: "T" }), { T: "short" })).toThrow(
      /shorter than 16 characters/,
    );
    const twice = [...route({ type: "bearer", tokenEnv: "T" }), ...route({ type: "bearer", tokenEnv: "T" })];
    expect(() => resolveWebhooks(twice, { T: "x".repeat(20) })).toThrow(/two entries named 'ci'/);
  });
});

describe("webhook route", () => {
  it("logs a forged delivery by reason, with nothing of its body or signature", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const routes = resolveWebhooks(route({ type: "hmac", secretEnv: "S" }), { S: "s".repeat(32) });
    const submitted: string[] = [];
    const handler = createInboundWebhookRoute({
      routes,
      submit: (_r, _id, prompt) => {
        submitted.push(prompt);
        return { kind: "accepted", turnId: "t1" };
      },
      logger: createLogger({ level: "debug", destination: sink }),
    });
    const server = createServer((req, res) => {
      void handler.handleHttp(req, res, req.url ?? "/").then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/in/ci`;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "x-signature-256": "sha256=deadbeefcafe4711" },
        body: JSON.stringify({ a: "SECRET-PAYLOAD-4711" }),
      });
      expect(res.status).toBe(401);
      expect((await fetch(url, { method: "GET" })).status).toBe(405);
      const log = lines.join("");
      expect(log).toContain('"reason":"bad_signature"');
      expect(log).not.toContain("SECRET-PAYLOAD-4711");
      expect(log).not.toContain("deadbeefcafe4711");
      expect(submitted).toEqual([]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
