/** Parsing of OpenAI-compatible request bodies. */
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { HeraldError } from "../../core/errors.js";

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** The subset of a chat.completions request Herald reads; other fields are accepted and ignored. */
export const chatRequestSchema = z.looseObject({
  model: z.string().optional(),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  user: z.string().max(256).optional(),
  /** Herald's extension: tool progress and buttons as data (see the adapter). */
  herald_events: z.boolean().optional(),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(["system", "developer", "user", "assistant", "tool"]),
        content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
      }),
    )
    .min(1),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** The text of a message's content (string, or the text parts of a parts array). */
export function contentText(content: ChatRequest["messages"][number]["content"]): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n");
}

/**
 * Reads and parses a JSON body.
 * @throws HeraldError `invalid_input` for bodies over `maxBytes` or invalid JSON.
 */
export function readJsonBody(req: IncomingMessage, maxBytes = 10 * 1024 * 1024): Promise<unknown> {
  // Plain listeners: the body is read on every turn, and a stream's async iterator costs several
  // objects and promises per chunk that then live as long as the request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off("data", onData);
        req.resume();
        reject(new HeraldError(`The body is over ${maxBytes} bytes.`, { code: "invalid_input" }));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("error", reject);
    req.once("end", () => {
      if (size > maxBytes) return;
      try {
        const text =
          chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
        resolve(JSON.parse(text));
      } catch (err) {
        reject(new HeraldError("The body is not valid JSON.", { code: "invalid_input", cause: err }));
      }
    });
  });
}
