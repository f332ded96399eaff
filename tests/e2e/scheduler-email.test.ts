/**
 * A cron job delivering to `email:<address>` through the real email adapter: nodemailer to an SMTP
 * endpoint, Dovecot for the mailbox. The report starts a new thread with the job's name as subject.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CronJobSpec } from "../../scheduler/types.js";
import { type CronGateway, startCronGateway } from "../helpers/cron-gateway.js";
import { ALICE, type EmailEnv, memoryKv, newAdapter, startEmailEnv } from "./email-env.js";

let env: EmailEnv;
let homeDir: string;

beforeAll(async () => {
  env = await startEmailEnv();
  homeDir = mkdtempSync(`${tmpdir()}/herald-cron-email-`);
});

afterAll(async () => {
  await env?.close();
  rmSync(homeDir, { recursive: true, force: true });
});

it("delivers a run's report to email:<address> as a new mail with the job's name as subject", async () => {
  const bot = env.nextBot();
  const spec: CronJobSpec = {
    name: "Disk check",
    prompt: "Check disk space.",
    schedule: { kind: "every", everyMs: 3_600_000, anchorAt: Date.now() },
    deliver: [`email:${ALICE}`],
  };
  const nextRunAt = Date.now() + 3_600_000;
  let gateway: CronGateway | undefined;
  try {
    gateway = await startCronGateway({
      homeDir,
      adapters: [newAdapter(env, bot, memoryKv())],
      jobs: { jdisk: { spec, nextRunAt } },
      reply: () => "# Disk /var\n\n**93%** full.",
    });
    await gateway.service.tick(nextRunAt);
    const sent = await env.smtp.waitFor(1);
    const mail = sent.find((m) => m.envelope.from === bot.address);
    expect(mail?.envelope.to).toEqual([ALICE]);
    expect(mail?.parsed.subject).toBe("Disk check");
    expect(mail?.parsed.inReplyTo).toBeUndefined();
    expect(mail?.parsed.html).toContain("<strong>93%</strong>");
    expect(gateway.runs("jdisk").map((r) => r.status)).toEqual(["ok"]);
  } finally {
    await gateway?.stop();
  }
});
