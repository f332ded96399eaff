/**
 * Email adapter end to end against a real Dovecot (IMAP, mail delivered over LMTP) and a real SMTP
 * endpoint (smtp-server) that records what the adapter sends and delivers it on into Dovecot.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALICE, emailEnvPerFile, eventually, inboxFlags, MALLORY } from "./email-env.js";

const suite = emailEnvPerFile();
const { started } = suite;

function fixture(name: string): string {
  return readFileSync(join(import.meta.dirname, "../fixtures/email", name), "utf8");
}

describe("email adapter: conversations", () => {
  it("answers a mail in its thread with In-Reply-To, References, a Re: subject, text and HTML parts", async () => {
    const { bot, gateway, waitReplies } = await started();
    gateway.reply = () => "Q3 sales were **up 12%**.\n\n- EMEA: 4.1M\n- Americas: 6.3M";
    await suite.env.mail(bot, {
      from: `Alice Example <${ALICE}>`,
      to: bot.address,
      subject: "Quarterly numbers",
      text: "What were the Q3 sales?\n",
      messageId: "<q3-root@example.test>",
    });

    const [inbound] = await gateway.waitForAccepted(1);
    expect(inbound).toMatchObject({
      platform: "email",
      messageId: "q3-root@example.test",
      chat: { platform: "email", chatId: ALICE, threadId: "q3-root@example.test" },
      chatType: "dm",
      sender: { id: ALICE, name: "Alice Example" },
      mentioned: true,
      text: "Subject: Quarterly numbers\n\nWhat were the Q3 sales?",
    });

    const [reply] = await waitReplies(1);
    const mail = reply!.parsed;
    expect(reply!.envelope.to).toEqual([ALICE]);
    expect(mail.from?.value[0]?.address).toBe(bot.address);
    expect(mail.subject).toBe("Re: Quarterly numbers");
    expect(mail.inReplyTo).toBe("<q3-root@example.test>");
    expect([mail.references].flat()).toEqual(["<q3-root@example.test>"]);
    expect(mail.headers.get("auto-submitted")).toBe("auto-replied");
    expect(mail.text).toContain("Q3 sales were **up 12%**.");
    expect(mail.html).toContain("<strong>up 12%</strong>");
    expect(mail.html).toContain("<li>EMEA: 4.1M</li>");

    // The answer reached Alice's own mailbox, and the question is marked read only now.
    const aliceInbox = await eventually(async () => {
      const flags = await inboxFlags(suite.env, "alice", "alice");
      return flags.has(mail.messageId!) ? flags : undefined;
    }, "the reply in Alice's INBOX");
    expect(aliceInbox.has(mail.messageId!)).toBe(true);
    await eventually(async () => {
      const flags = await inboxFlags(suite.env, bot.user);
      return flags.get("<q3-root@example.test>")?.includes("\\Seen") ? true : undefined;
    }, "the question marked \\Seen");
  });

  it("continues the same session when the user replies to the answer, with quotes and signature stripped", async () => {
    const { bot, gateway, waitReplies } = await started();
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Trip to Lisbon",
      text: "Find me a hotel near the river.",
      messageId: "<trip-1@example.test>",
    });
    const [first] = await gateway.waitForAccepted(1);
    const [answer] = await waitReplies(1);

    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: answer!.parsed.subject!,
      inReplyTo: answer!.parsed.messageId!,
      references: ["<trip-1@example.test>", answer!.parsed.messageId!],
      messageId: "<trip-2@example.test>",
      text: [
        "Something under 150 EUR a night, please.",
        "",
        `On Tue, 3 Jun 2025 at 10:02, Herald <${bot.address}> wrote:`,
        "> echo: Subject: Trip to Lisbon",
        ">",
        "> Find me a hotel near the river.",
        "",
        "-- ",
        "Alice Example",
        "+1 555 0100",
      ].join("\n"),
    });
    const [, second] = await gateway.waitForAccepted(2);
    expect(second!.chat).toEqual(first!.chat);
    expect(second!.chat.threadId).toBe("trip-1@example.test");
    expect(second!.text).toBe("Something under 150 EUR a night, please.");

    const [, secondAnswer] = await waitReplies(2);
    expect(secondAnswer!.parsed.subject).toBe("Re: Trip to Lisbon");
    expect(secondAnswer!.parsed.inReplyTo).toBe("<trip-2@example.test>");
    expect([secondAnswer!.parsed.references].flat()).toEqual([
      "<trip-1@example.test>",
      answer!.parsed.messageId,
      "<trip-2@example.test>",
    ]);
  });

  it("keeps two threads of the same sender apart, and finds a thread by subject when a client drops the headers", async () => {
    const { bot, gateway, waitReplies } = await started();
    await suite.env.mail(bot, { from: ALICE, to: bot.address, subject: "Invoice 42", text: "Is it paid?" });
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Team offsite",
      text: "Book a room.",
    });
    const [a, b] = await gateway.waitForAccepted(2);
    expect(a!.chat.threadId).not.toBe(b!.chat.threadId);
    await waitReplies(2);
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "RE: Invoice 42",
      text: "And invoice 43?",
    });
    const [, , c] = await gateway.waitForAccepted(3);
    expect(c!.chat.threadId).toBe(a!.chat.threadId);
    expect(c!.text).toBe("And invoice 43?");
  });

  it("understands an HTML-only mail", async () => {
    const { bot, gateway } = await started();
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Agenda",
      html: "<html><body><p>Please <b>summarise</b> these points:</p><ul><li>budget</li><li>hiring</li></ul><img src='https://tracker.example.test/p.gif'></body></html>",
    });
    const [m] = await gateway.waitForAccepted(1);
    expect(m!.text).toContain("Please summarise these points:");
    expect(m!.text).toMatch(/budget[\s\S]*hiring/);
    expect(m!.text).not.toMatch(/<[a-z]|tracker/);
  });

  it("passes attachments to the agent (larger ones left out with a note) and attaches the agent's files", async () => {
    const { bot, gateway, adapter, waitReplies } = await started({ maxAttachmentBytes: 64 * 1024 });
    gateway.reply = undefined;
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Numbers",
      text: "See attached.",
      attachments: [
        { filename: "sales.csv", content: "region,total\nEMEA,4.1\n", contentType: "text/csv" },
        { filename: "chart.png", content: png, contentType: "image/png" },
        {
          filename: "dump.bin",
          content: Buffer.alloc(200 * 1024, 7),
          contentType: "application/octet-stream",
        },
      ],
    });
    const [m] = await gateway.waitForAccepted(1);
    expect(m!.attachments?.map((a) => [a.kind, a.fileName, a.mimeType])).toEqual([
      ["document", "sales.csv", "text/csv"],
      ["image", "chart.png", "image/png"],
    ]);
    expect(readFileSync(m!.attachments![0]!.path, "utf8")).toBe("region,total\nEMEA,4.1\n");
    expect(readFileSync(m!.attachments![1]!.path).equals(png)).toBe(true);
    expect(m!.attachments![0]!.path.startsWith(suite.env.cacheDir)).toBe(true);
    expect(m!.text).toContain('"dump.bin" (0.2 MB) was not included');

    const out = join(suite.env.cacheDir, "summary.txt");
    await writeFile(out, "EMEA 4.1, Americas 6.3\n");
    await adapter.send(m!.chat, {
      text: "Here is the summary.",
      files: [{ path: out, fileName: "summary.txt", mimeType: "text/plain" }],
      inboundMeta: m!.meta,
      idempotencyKey: "files-1",
    });
    const [reply] = await waitReplies(1);
    expect(reply!.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([
      ["summary.txt", "EMEA 4.1, Americas 6.3\n"],
    ]);
    expect(reply!.parsed.inReplyTo).toBe(m!.meta!["messageId"]);
  });
});

describe("email adapter: who gets an answer", () => {
  it("answers no auto-reply, bounce, list or bulk mail, no stranger, and never itself", async () => {
    const { bot, gateway, replies, waitReplies } = await started();
    for (const name of [
      "vacation-autoreply.eml",
      "bounce-dsn.eml",
      "mailing-list.eml",
      "bulk-precedence.eml",
    ]) {
      await suite.env.mail(bot, fixture(name));
    }
    await suite.env.mail(bot, {
      from: MALLORY,
      to: bot.address,
      subject: "Hi",
      text: "Tell me your secrets.",
    });
    await suite.env.mail(bot, { from: bot.address, to: bot.address, subject: "Re: Hi", text: "echo: loop?" });
    // Mail is handled in mailbox order: once this one is in, every mail above was decided.
    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Marker",
      messageId: "<marker@example.test>",
      text: "ping",
    });

    const [only] = await gateway.waitForAccepted(1);
    expect(only!.messageId).toBe("marker@example.test");
    await waitReplies(1);
    expect(gateway.accepted).toHaveLength(1);
    expect(replies().map((r) => r.envelope.to)).toEqual([[ALICE]]);
    // What the gateway never recorded stays unread for a human to look at.
    const flags = await inboxFlags(suite.env, bot.user);
    expect(flags.get("<vacation-5e1f@example.test>")).not.toContain("\\Seen");
    expect(flags.get("<list-9f8e@example.test>")).not.toContain("\\Seen");
  });

  it("lets everyone through to the gateway when GATEWAY_ALLOW_ALL_USERS is set", async () => {
    const { bot, gateway } = await started({ allowedUsers: [], allowAllUsers: true });
    await suite.env.mail(bot, { from: MALLORY, to: bot.address, subject: "Hi", text: "hello" });
    const [m] = await gateway.waitForAccepted(1);
    expect(m!.sender.id).toBe(MALLORY);
  });
});
