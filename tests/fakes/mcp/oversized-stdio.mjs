/** The oversized fake MCP server over stdio: one JSON-RPC message per line (see oversized-protocol.mjs). */
import { createInterface } from "node:readline";
import { answer, writeHuge } from "./oversized-protocol.mjs";

const write = (text) =>
  new Promise((resolve) => {
    if (process.stdout.write(text)) resolve(!process.stdout.destroyed);
    else process.stdout.once("drain", () => resolve(!process.stdout.destroyed));
  });
process.stdout.on("error", () => process.exit(0));

for await (const line of createInterface({ input: process.stdin })) {
  const reply = answer(JSON.parse(line));
  if (!reply) continue;
  if (reply.small) await write(`${JSON.stringify(reply.small)}\n`);
  else {
    await writeHuge(reply.id, reply.huge, write);
    await write("\n");
  }
}
