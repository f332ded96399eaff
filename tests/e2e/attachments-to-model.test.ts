/**
 * Files a user sends reach the agent: a PDF's and a DOCX's text go into the model's message through the
 * real Telegram adapter and gateway, a long document is left to read_file at its workspace path, and the
 * agent's file tools open that copy. A model on Anthropic gets the PDF itself as a `document` block
 * (base64 source), not its text; the session keeps the text for later turns and other models.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/anthropic/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { makeDocx, makePdf } from "../helpers/document-fixtures.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let claude: FakeAnthropic | undefined;
afterEach(async () => {
  await claude?.close();
  claude = undefined;
});

async function withFiles(name: string, fields: Record<string, unknown>) {
  const update = await fixture(name);
  Object.assign(update["message"] as Record<string, unknown>, fields);
  return update;
}

const userText = (request: { messages: { role: string; content?: unknown }[] }) =>
  String(request.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

describe("attachments reach the model", () => {
  it("a PDF and a DOCX sent on Telegram arrive as their text, named by their workspace path", async () => {
    const { fake, h } = await startTelegramGateway(running);
    const pdf = fake.addFile(makePdf([["Invoice 4711 totals 99 euros"]]), "documents/file_1.pdf");
    const docx = fake.addFile(await makeDocx(["Minutes: ship on Friday"]), "documents/file_2.docx");
    fake.pushUpdate(
      await withFiles("private-document", {
        document: { ...pdf, file_name: "invoice.pdf", mime_type: "application/pdf" },
      }),
    );
    await botReplies(fake, 111, 1);
    fake.pushUpdate(
      await withFiles("private-document", {
        message_id: 9001,
        document: {
          ...docx,
          file_name: "minutes.docx",
          mime_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        },
      }),
    );
    await botReplies(fake, 111, 2);
    const [first, second] = h.llm.requests.map(userText);
    expect(first).toContain("[text of invoice.pdf (pdf):]\nInvoice 4711 totals 99 euros");
    expect(first).toContain("/workspace/attachments/invoice.pdf");
    expect(second).toContain("Minutes: ship on Friday");
  });

  it("a long document is left to read_file, which opens the workspace copy", async () => {
    const { fake, h } = await startTelegramGateway(running);
    const lines = Array.from({ length: 3000 }, (_, i) => `clause ${i + 1} of the long contract`);
    // 60 pages of 50 lines (a page holds about that many).
    const pages = Array.from({ length: 60 }, (_, p) => lines.slice(p * 50, p * 50 + 50));
    const pdf = fake.addFile(makePdf(pages), "documents/file_3.pdf");
    h.llm.script(
      (req) => {
        const path = /read it with read_file (\S+)\]/.exec(userText(req))?.[1] ?? "missing";
        return { toolCalls: [{ name: "read_file", arguments: { path, offset: 1, limit: 3 } }] };
      },
      (req) => ({ text: String(req.messages.at(-1)?.content ?? "") }),
    );
    fake.pushUpdate(
      await withFiles("private-document", {
        document: { ...pdf, file_name: "contract.pdf", mime_type: "application/pdf" },
      }),
    );
    // The progress line comes first and is deleted once the answer is out.
    let reply = "";
    await vi.waitFor(
      async () => {
        reply = (await botReplies(fake, 111, 1)).at(-1) ?? "";
        expect(reply).toContain("of the long contract");
      },
      { timeout: 15_000 },
    );
    expect(userText(h.llm.requests[0]!)).toMatch(
      /contract\.pdf holds \d+ characters of text, too long to include/,
    );
    expect(reply).toContain("clause 1 of the long contract");
    expect(reply).not.toContain("clause 4 of the long contract");
  });

  it("a PDF sent to a model on Anthropic arrives as a document block, not its text", async () => {
    claude = await startFakeAnthropic({ apiKey: "sk-ant-attach" });
    const fake = running.trackFake(await startFakeTelegram());
    const h = await running.startHarness({
      env: {
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.url,
        TELEGRAM_ALLOWED_USERS: "111,222",
        ATTACH_ANTHROPIC_KEY: "sk-ant-attach",
      },
      configYaml: `providers:
  - name: claude
    api: anthropic
    base_url: ${claude.url}
    api_key_env: ATTACH_ANTHROPIC_KEY
    models: [{ name: claude-test }]
model:
  default: claude/claude-test
`,
    });
    const bytes = makePdf([["Invoice 4711 totals 99 euros"]]);
    const pdf = fake.addFile(bytes, "documents/file_9.pdf");
    claude.script({ text: "The invoice totals 99 euros." });
    fake.pushUpdate(
      await withFiles("private-document", {
        document: { ...pdf, file_name: "invoice.pdf", mime_type: "application/pdf" },
      }),
    );
    expect(await botReplies(fake, 111, 1)).toContain("The invoice totals 99 euros.");
    expect(claude.rejected).toEqual([]);
    const user = claude.requests[0]!.messages.at(-1)!;
    const blocks = user.content as { type: string; text?: string; source?: unknown; title?: string }[];
    const document = blocks.find((b) => b.type === "document");
    expect(document).toMatchObject({
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: Buffer.from(bytes).toString("base64") },
      title: "invoice.pdf",
    });
    const text = blocks.map((b) => b.text ?? "").join("\n");
    expect(text).toContain("[attached file: invoice.pdf, application/pdf,");
    expect(text).not.toContain("Invoice 4711 totals 99 euros");
    expect(h.llm.received()).toBe(0);
  });
});
