/**
 * The PlatformAdapter contract suite: every platform's real adapter, pointed at its fake (or real)
 * server, runs these cases. What a platform cannot do is declared in its driver (`abilities`,
 * `maxChars`, `errors`) and the suite holds the adapter to that declaration: an ability declared missing
 * must be absent on the adapter, never skipped by hand. No case asserts on wall-clock time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type HeraldErrorCode, PlatformError } from "../../core/errors.js";
import type { ChatRef, InboundHandler, PlatformAdapter } from "../../core/types.js";

/** A bot message as the platform holds it. `id` when the fake knows the id it gave the message. */
export interface DeliveredMessage {
  id?: string | undefined;
  /** The text as the platform shows it (its dialect: HTML entities resolved, mrkdwn, Markdown…). */
  text: string;
}

/** One case's world: a fresh fake server and a built, not yet started, adapter pointed at it. */
export interface AdapterRig {
  adapter: PlatformAdapter;
  /** A chat the bot may write to. */
  chat: ChatRef;
  /** Resolves once the started adapter can send (e.g. its connection opened). Absent: at once. */
  ready?(): Promise<void>;
  /** The bot's messages the platform holds in `chat`, in order. */
  delivered(): DeliveredMessage[] | Promise<DeliveredMessage[]>;
  /** The text the platform now shows for message `id` (edits applied). Required with `edit`. */
  currentText?(id: string): string | undefined;
  /** Whether message `id` is gone from the chat. Required with `deleteMessage`. */
  isDeleted?(id: string): boolean;
  /** The platform answers the next send with its rate-limit response (429 + wait where it has one). */
  rateLimitNextSend(): void | Promise<void>;
  /** The platform refuses the credentials on the next send (revoked token, refused login). */
  refuseAuthOnNextSend(): void | Promise<void>;
  /** A chat the platform does not know; arranges whatever the fake needs to answer for it. */
  unknownChat(): ChatRef | Promise<ChatRef>;
  /** Stops every adapter of the rig and the fake. */
  close(): Promise<void>;
}

/** How one platform takes part in the contract. */
export interface PlatformDriver {
  platform: string;
  /** The optional members the adapter has. A `false` here means the member must be absent. */
  abilities: { edit: boolean; deleteMessage: boolean; sendTyping: boolean; status: boolean };
  /** The longest message the platform takes, in `length()` units; undefined: never split. */
  maxChars: number | undefined;
  /** How the platform counts a message's length. @defaultValue UTF-16 units (`text.length`) */
  length?: ((text: string) => number) | undefined;
  /** What the adapter reports for each fault (read from its errors file). */
  errors: {
    /** `retryAfterMs`: the wait the rig's rate limit asks for; undefined: the platform has no wait. */
    rateLimited: { code: HeraldErrorCode; retryAfterMs: number | undefined };
    authFailed: { code: HeraldErrorCode };
    notFound: { code: HeraldErrorCode };
  };
  /** Once before the first case (e.g. start a real server shared by the cases). */
  beforeAll?(): Promise<void>;
  afterAll?(): Promise<void>;
  /** A fresh rig for one case. */
  setup(): Promise<AdapterRig>;
}

const SHORT = "Hello from the contract suite 4711";

/** About `chars` characters of distinct words in paragraphs of ~600, so every word is checkable. */
export function longText(chars: number): { text: string; words: string[] } {
  const words: string[] = [];
  const paragraphs: string[] = [];
  let length = 0;
  for (let p = 0; length < chars; p++) {
    const paragraph = Array.from({ length: 60 }, (_, i) => `w${p}x${i}`);
    words.push(...paragraph);
    paragraphs.push(paragraph.join(" "));
    length += paragraph.join(" ").length + 2;
  }
  return { text: paragraphs.join("\n\n"), words };
}

const wordsOf = (texts: string[]) =>
  texts
    .join(" ")
    .split(/\s+/)
    .filter((w) => w.length > 0);

const accept: InboundHandler = async () => "accepted";

async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the send should have failed").toBeInstanceOf(PlatformError);
  return err as PlatformError;
}

/** Registers the contract cases for one platform. */
export function platformAdapterContract(driver: PlatformDriver): void {
  const length = driver.length ?? ((text: string) => text.length);

  describe(`PlatformAdapter contract: ${driver.platform}`, () => {
    const rigs: AdapterRig[] = [];
    if (driver.beforeAll) beforeAll(() => driver.beforeAll!());
    if (driver.afterAll) afterAll(() => driver.afterAll!());
    afterEach(async () => {
      for (const rig of rigs.splice(0)) await rig.close();
    });

    const rig = async () => {
      const made = await driver.setup();
      rigs.push(made);
      return made;
    };
    const started = async () => {
      const made = await rig();
      await made.adapter.start(accept);
      await made.ready?.();
      return made;
    };
    let key = 0;
    const message = (text: string) => ({ text, idempotencyKey: `contract-${driver.platform}-${++key}` });

    it("has exactly the optional members its driver declares", async () => {
      const { adapter } = await rig();
      expect(adapter.platform).toBe(driver.platform);
      for (const member of ["edit", "deleteMessage", "sendTyping", "status"] as const) {
        expect(typeof adapter[member], member).toBe(driver.abilities[member] ? "function" : "undefined");
      }
    });

    it("start/stop: stop before start, start twice and stop twice are harmless; stopped after stop", async () => {
      const { adapter, chat, ready, delivered } = await rig();
      await adapter.stop();
      if (adapter.status) expect(adapter.status().state).toBe("stopped");
      await adapter.start(accept);
      await adapter.start(accept);
      await ready?.();
      if (adapter.status) {
        await vi.waitFor(() => expect(adapter.status!().state).toBe("running"), { timeout: 10_000 });
      }
      // Still one working connection after the second start.
      await adapter.send(chat, message(SHORT));
      expect(await delivered()).toHaveLength(1);
      await adapter.stop();
      await adapter.stop();
      if (adapter.status) expect(adapter.status().state).toBe("stopped");
    });

    it("start: two overlapping starts both settle on one connection", async () => {
      const { adapter, chat, ready, delivered } = await rig();
      await Promise.all([adapter.start(accept), adapter.start(accept)]);
      await ready?.();
      await adapter.send(chat, message(SHORT));
      expect(await delivered()).toHaveLength(1);
      await adapter.stop();
    });

    it("send: a short message is one message with one id, and the platform shows its text", async () => {
      const { adapter, chat, delivered } = await started();
      const confirmed: number[] = [];
      const result = await adapter.send(chat, message(SHORT), { onChunkSent: (i) => confirmed.push(i) });
      expect(result.messageIds).toHaveLength(1);
      expect(result.messageIds[0]).toEqual(expect.any(String));
      expect(result.messageIds[0]).not.toBe("");
      expect(confirmed).toEqual([0]);
      const got = await delivered();
      expect(got).toHaveLength(1);
      expect(got[0]!.text).toContain(SHORT);
      if (got[0]!.id !== undefined) expect(got[0]!.id).toBe(result.messageIds[0]);
    });

    it("send: a message with buttons is delivered with its text, as one message", async () => {
      const { adapter, chat, delivered } = await started();
      const buttons = [[{ label: "Yes", data: "/approve 0a1b2c3d" }], [{ label: "No", data: "No, thanks" }]];
      const result = await adapter.send(chat, { ...message(SHORT), buttons });
      expect(result.messageIds).toHaveLength(1);
      const got = await delivered();
      expect(got).toHaveLength(1);
      expect(got[0]!.text).toContain(SHORT);
    });

    if (driver.maxChars !== undefined) {
      const maxChars = driver.maxChars;
      it(`chunking: a message over ${maxChars} characters arrives whole, in order, in messages within the limit; fromChunk resumes`, async () => {
        const { adapter, chat, delivered } = await started();
        const { text, words } = longText(Math.round(maxChars * 2.5));
        const confirmed: number[] = [];
        const result = await adapter.send(chat, message(text), { onChunkSent: (i) => confirmed.push(i) });
        const got = await delivered();
        expect(got.length).toBeGreaterThanOrEqual(3);
        expect(result.messageIds).toHaveLength(got.length);
        expect(confirmed).toEqual(got.map((_, i) => i));
        for (const m of got) expect(length(m.text)).toBeLessThanOrEqual(maxChars);
        expect(wordsOf(got.map((m) => m.text))).toEqual(words);
        const ids = got.map((m) => m.id);
        if (ids.every((id) => id !== undefined)) expect(result.messageIds).toEqual(ids);

        // A new idempotency key: platforms with idempotent sends would rightly answer the same key with
        // the messages already posted, which would hide what this call sent.
        const resumed: number[] = [];
        const rest = await adapter.send(chat, message(text), {
          fromChunk: 1,
          onChunkSent: (i) => resumed.push(i),
        });
        const after = await delivered();
        expect(after.slice(got.length).map((m) => m.text)).toEqual(got.slice(1).map((m) => m.text));
        expect(rest.messageIds).toHaveLength(got.length - 1);
        expect(resumed).toEqual(got.slice(1).map((_, i) => i + 1));
      });
    } else {
      it("chunking: none on this platform; a long message is one message, and fromChunk 1 sends nothing", async () => {
        const { adapter, chat, delivered } = await started();
        const { text, words } = longText(12_000);
        const result = await adapter.send(chat, message(text));
        const got = await delivered();
        expect(got).toHaveLength(1);
        expect(result.messageIds).toHaveLength(1);
        expect(wordsOf([got[0]!.text])).toEqual(words);
        const rest = await adapter.send(chat, message(text), { fromChunk: 1 });
        expect(rest.messageIds).toEqual([]);
        expect(await delivered()).toHaveLength(1);
      });
    }

    if (driver.abilities.edit) {
      it("edit: the platform then shows the new text for that message id", async () => {
        const r = await started();
        const { messageIds } = await r.adapter.send(r.chat, { ...message("🔧 step one"), kind: "notice" });
        const id = messageIds[0]!;
        await r.adapter.edit!(r.chat, id, "🔧 step one\n🔧 step two");
        expect(r.currentText!(id)).toContain("step two");
        expect(r.currentText!(id)).toContain("step one");
      });
    } else {
      it("edit: declared unsupported, and absent on the adapter", async () => {
        const { adapter } = await rig();
        expect(adapter.edit).toBeUndefined();
      });
    }

    if (driver.abilities.deleteMessage) {
      it("deleteMessage: the message is gone, and deleting it again is not an error", async () => {
        const r = await started();
        const { messageIds } = await r.adapter.send(r.chat, { ...message("🔧 working"), kind: "notice" });
        const id = messageIds[0]!;
        expect(r.isDeleted!(id)).toBe(false);
        await r.adapter.deleteMessage!(r.chat, id);
        expect(r.isDeleted!(id)).toBe(true);
        // A retried delete finds the message gone already.
        await expect(r.adapter.deleteMessage!(r.chat, id)).resolves.toBeUndefined();
        expect(r.isDeleted!(id)).toBe(true);
      });
    } else {
      it("deleteMessage: declared unsupported, and absent on the adapter", async () => {
        const { adapter } = await rig();
        expect(adapter.deleteMessage).toBeUndefined();
      });
    }

    if (driver.abilities.sendTyping) {
      it("sendTyping: resolves (best effort), also when repeated", async () => {
        const { adapter, chat } = await started();
        await expect(adapter.sendTyping!(chat)).resolves.toBeUndefined();
        await expect(adapter.sendTyping!(chat)).resolves.toBeUndefined();
      });
    } else {
      it("sendTyping: declared unsupported, and absent on the adapter", async () => {
        const { adapter } = await rig();
        expect(adapter.sendTyping).toBeUndefined();
      });
    }

    const { rateLimited, authFailed, notFound } = driver.errors;
    it(
      rateLimited.retryAfterMs === undefined
        ? "errors: a rate limit (deferral) is retryable; this platform names no wait"
        : "errors: a rate limit is retryable and carries the platform's wait",
      async () => {
        const { adapter, chat, delivered, rateLimitNextSend } = await started();
        await rateLimitNextSend();
        const err = await failure(adapter.send(chat, message(SHORT)));
        expect(err).toMatchObject({ platform: driver.platform, code: rateLimited.code, retryable: true });
        if (rateLimited.retryAfterMs === undefined) expect(err.retryAfterMs).toBeUndefined();
        else {
          expect(err.retryAfterMs).toBeGreaterThanOrEqual(rateLimited.retryAfterMs * 0.9);
          expect(err.retryAfterMs).toBeLessThanOrEqual(rateLimited.retryAfterMs * 1.1);
        }
        expect(await delivered()).toHaveLength(0);
      },
    );

    it(`errors: refused credentials are final (not retryable, ${authFailed.code})`, async () => {
      const { adapter, chat, refuseAuthOnNextSend } = await started();
      await refuseAuthOnNextSend();
      const err = await failure(adapter.send(chat, message(SHORT)));
      expect(err).toMatchObject({ platform: driver.platform, code: authFailed.code, retryable: false });
    });

    it(`errors: an unknown chat is final (not retryable, ${notFound.code})`, async () => {
      const { adapter, unknownChat } = await started();
      const err = await failure(adapter.send(await unknownChat(), message(SHORT)));
      expect(err).toMatchObject({ platform: driver.platform, code: notFound.code, retryable: false });
    });
  });
}
