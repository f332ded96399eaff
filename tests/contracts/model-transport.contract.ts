/**
 * The ModelTransport contract suite: every wire protocol's transport, against its vendor's fake API,
 * streams text as it comes, returns tool calls the next request can answer, reports usage, sends
 * images as the vendor takes them, and classifies failures the same way (retryable with Retry-After,
 * context too long, auth, refusal), so the model client's retries, compression and fallbacks work
 * alike over every protocol.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelTransport, ResolvedModel } from "../../agent/providers/index.js";
import { isAbortError } from "../../core/errors.js";

/** One transport with its fake, as a case needs them. */
export interface TransportDriver {
  transport: ModelTransport;
  target: ResolvedModel;
  text(text: string): void;
  toolCall(name: string, args: Record<string, unknown>): void;
  error(status: number, message: string, retryAfterSeconds?: number): void;
  refusal(): void;
  /** How the vendor phrases "the prompt does not fit" (its status and message). */
  contextTooLong: { status: number; message: string };
  /** Whether the last request carried an image with these base64 bytes, in the vendor's own block. */
  lastRequestHasImage(base64: string): boolean;
  /** The text the last request's final user turn carried (tool results included). */
  lastRequestText(): string;
  close(): Promise<void>;
}

export function modelTransportContract(name: string, make: () => Promise<TransportDriver>): void {
  describe(`ModelTransport contract: ${name}`, () => {
    let d: TransportDriver;
    beforeEach(async () => {
      d = await make();
    });
    afterEach(async () => {
      await d.close();
    });
    const user = (text: string) => ({ role: "user" as const, content: text });

    it("streams the answer's text in pieces and reports usage", async () => {
      d.text("The quick brown fox jumps over the lazy dog.");
      const pieces: string[] = [];
      const answer = await d.transport.stream(d.target, {
        messages: [{ role: "system", content: "Be brief." }, user("tell me")],
        onTextDelta: (t) => pieces.push(t),
      });
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join("")).toBe("The quick brown fox jumps over the lazy dog.");
      expect(answer.message).toMatchObject({
        role: "assistant",
        content: "The quick brown fox jumps over the lazy dog.",
      });
      expect(answer.finishReason).toBe("stop");
      expect(answer.usage.promptTokens).toBeGreaterThan(0);
      expect(answer.usage.completionTokens).toBeGreaterThan(0);
    });

    it("returns tool calls whose results the next request carries back", async () => {
      d.toolCall("weather", { city: "Oslo" });
      const tools = [
        {
          type: "function" as const,
          function: {
            name: "weather",
            description: "The weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        },
      ];
      const first = await d.transport.stream(d.target, { messages: [user("weather in Oslo?")], tools });
      expect(first.finishReason).toBe("tool_calls");
      const call = first.message.tool_calls?.[0];
      expect(call?.function.name).toBe("weather");
      expect(JSON.parse(call!.function.arguments)).toEqual({ city: "Oslo" });
      d.text("It is sunny.");
      const second = await d.transport.stream(d.target, {
        messages: [
          user("weather in Oslo?"),
          first.message,
          { role: "tool", tool_call_id: call!.id, content: "sunny, 21 C" },
        ],
        tools,
      });
      expect(second.message.content).toBe("It is sunny.");
      expect(d.lastRequestText()).toContain("sunny, 21 C");
    });

    it("sends an image part as the vendor's image", async () => {
      d.text("A red dot.");
      const png = Buffer.from("fake png bytes").toString("base64");
      await d.transport.stream(d.target, {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "what is this?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
            ],
          },
        ],
      });
      expect(d.lastRequestHasImage(png)).toBe(true);
    });

    it("classifies a rate limit as retryable with its Retry-After", async () => {
      d.error(429, "rate limited", 2);
      const err = await d.transport.stream(d.target, { messages: [user("x")] }).catch((e: unknown) => e);
      expect(d.transport.classify(err)).toMatchObject({
        category: "retryable",
        retry: true,
        status: 429,
        retryAfterMs: 2000,
      });
    });

    it("classifies a prompt over the context window as context-too-long", async () => {
      d.error(d.contextTooLong.status, d.contextTooLong.message);
      const err = await d.transport.stream(d.target, { messages: [user("x")] }).catch((e: unknown) => e);
      expect(d.transport.classify(err)).toMatchObject({
        category: "context-too-long",
        retry: false,
        contextTooLong: true,
      });
    });

    it("classifies a refused key as auth, a refusal as refusal, a 5xx as retryable", async () => {
      d.error(401, "invalid key");
      const auth = await d.transport.stream(d.target, { messages: [user("x")] }).catch((e: unknown) => e);
      expect(d.transport.classify(auth)).toMatchObject({ category: "auth", status: 401, retry: false });
      d.refusal();
      const refused = await d.transport.stream(d.target, { messages: [user("x")] }).catch((e: unknown) => e);
      expect(d.transport.classify(refused)).toMatchObject({ category: "refusal", retry: false });
      d.error(500, "internal");
      const down = await d.transport.stream(d.target, { messages: [user("x")] }).catch((e: unknown) => e);
      expect(d.transport.classify(down)).toMatchObject({ category: "retryable", retry: true });
    });

    it("stops at once when its signal fires", async () => {
      const controller = new AbortController();
      controller.abort(new Error("user pressed stop"));
      const err = await d.transport
        .stream(d.target, { messages: [user("x")], signal: controller.signal })
        .catch((e: unknown) => e);
      expect(isAbortError(err)).toBe(true);
    });
  });
}
