/**
 * The floor the gateway is measured against: the least a Telegram gateway can do with plain `fetch`.
 * It long-polls `getUpdates`, asks the model (streaming, as Herald does) and sends the answer — no
 * sessions, no persistence, no ordering, no limits. Run as its own process by `bench/floor.ts` with
 * `TELEGRAM_API_ROOT`, `TELEGRAM_BOT_TOKEN`, `OPENAI_BASE_URL` and `HERALD_MODEL`.
 */
const env = (name: string): string => process.env[name] ?? "";
const api = `${env("TELEGRAM_API_ROOT")}/bot${env("TELEGRAM_BOT_TOKEN")}`;
const json = { "content-type": "application/json" };

async function call(method: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${api}/${method}`, { method: "POST", headers: json, body: JSON.stringify(body) });
  return ((await res.json()) as { result: unknown }).result;
}

async function reply(chatId: number, text: string): Promise<void> {
  const res = await fetch(`${env("OPENAI_BASE_URL")}/chat/completions`, {
    method: "POST",
    headers: { ...json, authorization: `Bearer ${env("OPENAI_API_KEY")}` },
    body: JSON.stringify({
      model: env("HERALD_MODEL"),
      stream: true,
      messages: [{ role: "user", content: text }],
    }),
  });
  let answer = "";
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    answer +=
      (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta
        .content ?? "";
  }
  await call("sendMessage", { chat_id: chatId, text: answer });
}

type Update = { update_id: number; message?: { chat: { id: number }; text?: string } };
await call("getMe", {});
let offset = 0;
for (;;) {
  const updates = (await call("getUpdates", { offset, timeout: 30 })) as Update[];
  for (const update of updates) {
    offset = update.update_id + 1;
    const message = update.message;
    if (message?.text) void reply(message.chat.id, message.text);
  }
}
