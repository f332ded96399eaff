/**
 * `/v1/responses` in the background, as the official `openai` SDK uses it against the real gateway with
 * the scripted fake model: `background: true` answers `queued` at once and the response completes on
 * its own (polled with `responses.retrieve`), `responses.cancel` stops a running one, and
 * `responses.inputItems.list` lists what the request sent.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.stop();
});

const client = () => new OpenAI({ baseURL: `${harness.apiUrl}/v1`, apiKey: "unused", maxRetries: 0 });

async function status(promise: Promise<unknown>): Promise<number | undefined> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return (err as InstanceType<typeof OpenAI.APIError>).status;
}

describe("/v1/responses in the background", () => {
  it("answers queued at once, completes on its own, and lists its input items", async () => {
    harness.llm.script({ text: "Done in the background.", delayMs: 300 });
    const created = await client().responses.create({
      model: "herald",
      input: "summarise the week",
      background: true,
    });
    expect(created.status).toBe("queued");
    expect(created.background).toBe(true);
    let polled = created;
    await vi.waitFor(
      async () => {
        polled = await client().responses.retrieve(created.id);
        expect(polled.status).toBe("completed");
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(polled.output_text).toBe("Done in the background.");
    expect(polled.background).toBe(true);
    const items = await client().responses.inputItems.list(created.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "summarise the week" }],
    });
    expect(items.data[0]!.id).toBeTruthy();
  });

  it("lists several input items newest first, or in order with order=asc", async () => {
    harness.llm.script({ text: "ok" });
    const created = await client().responses.create({
      input: [
        { role: "user", content: "first question" },
        { role: "assistant", content: "first answer" },
        { role: "user", content: "second question" },
      ],
    });
    const desc = await client().responses.inputItems.list(created.id);
    const text = (item: unknown) => (item as { content: { text: string }[] }).content[0]!.text;
    expect(desc.data.map(text)).toEqual(["second question", "first answer", "first question"]);
    const asc = await client().responses.inputItems.list(created.id, { order: "asc", limit: 2 });
    expect(asc.data.map(text)).toEqual(["first question", "first answer"]);
    expect(asc.has_more).toBe(true);
  });

  it("cancels a running background response, which stays cancelled", async () => {
    harness.llm.script({ text: "too late", delayMs: 4000 });
    const created = await client().responses.create({ input: "a long job", background: true });
    await vi.waitFor(() => expect(harness.llm.received()).toBeGreaterThan(0), { timeout: 10_000 });
    const cancelled = await client().responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await client().responses.retrieve(created.id)).status).toBe("cancelled");
  });

  it("refuses background without store, and cancelling a response made in the foreground", async () => {
    expect(await status(client().responses.create({ input: "hi", background: true, store: false }))).toBe(
      400,
    );
    harness.llm.script({ text: "foreground" });
    const done = await client().responses.create({ input: "hi" });
    expect(await status(client().responses.cancel(done.id))).toBe(400);
    expect(await status(client().responses.inputItems.list("resp_missing"))).toBe(404);
  });
});
