/**
 * `send_message` from a `herald worker` process on Redis: the tool reaches the gateway's outbox over
 * the authenticated state API (`chat.send`), the owner's message arrives in the other chat once, and a
 * user who is not the owner is refused there too.
 */
import { describe, expect, it } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

const texts = (tg: FakeTelegram, chatId: number) => tg.botMessages(chatId).map((m) => m.text ?? "");

describe("send_message on Redis", () => {
  it("goes from the worker through the state API to the other chat, owner only", async () => {
    const { c, tg, model: llm } = await cluster.start({ gatewayEnv: { GATEWAY_ALLOW_ALL_USERS: "true" } });
    await c.startWorker();
    const send = (text: string) => ({
      toolCalls: [{ name: "send_message", arguments: { target: "telegram:222", text } }],
    });
    llm.script(send("From the owner, via a worker."), { text: "Sent it." });
    tg.userSends({ chatId: 111, fromId: 111, text: "tell 222 hello" });
    await eventually(
      () => texts(tg, 111).includes("Sent it.") && texts(tg, 222).length === 1,
      () => `111: ${texts(tg, 111)} 222: ${texts(tg, 222)}\n${c.output()}`,
    );
    expect(texts(tg, 222)).toEqual(["From the owner, via a worker."]);

    llm.script(send("not from the owner"), { text: "Refused." });
    tg.userSends({ chatId: 333, fromId: 333, text: "tell 222 something" });
    await eventually(
      () => texts(tg, 333).includes("Refused."),
      () => `333: ${texts(tg, 333)}\n${c.output()}`,
    );
    const tool = llm.requests.at(-1)!.messages.find((m) => m.role === "tool");
    expect(String(tool?.content)).toMatch(/only the owner may send to another chat/);
    expect(texts(tg, 222)).toEqual(["From the owner, via a worker."]);
  });
});
