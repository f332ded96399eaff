/**
 * The JSON-RPC side of a fake MCP server whose one tool, `dump`, answers with a text of `megabytes`
 * MB, written a megabyte at a time and never held whole (the fake costs nothing, whatever it sends).
 * Plain JavaScript, so the stdio server runs as `node oversized-stdio.mjs` from any folder.
 */

/** The answer to one request, or undefined for a notification: `{ small }` or `{ huge: megabytes }`. */
export function answer(message) {
  if (message.id === undefined) return undefined;
  const reply = (result) => ({ small: { jsonrpc: "2.0", id: message.id, result } });
  switch (message.method) {
    case "initialize":
      return reply({
        protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "oversized", version: "1.0.0" },
      });
    case "tools/list":
      return reply({
        tools: [
          {
            name: "dump",
            description: "answers with a text of the given size",
            inputSchema: { type: "object", properties: { megabytes: { type: "number" } } },
          },
        ],
      });
    case "tools/call":
      return { huge: Number(message.params?.arguments?.megabytes ?? 1), id: message.id };
    default:
      return {
        small: { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } },
      };
  }
}

/**
 * Writes the huge answer through `write(chunk)` (which resolves when the chunk may be followed):
 * the JSON's head, `megabytes` of "a", its tail. Stops early when `write` resolves false.
 */
export async function writeHuge(id, megabytes, write) {
  const block = "a".repeat(1024 * 1024);
  if (
    !(await write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`))
  )
    return;
  for (let i = 0; i < megabytes; i++) if (!(await write(block))) return;
  await write(`"}]}}`);
}
