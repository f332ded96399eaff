/**
 * Preloaded (`--import`) into a gateway the latency scenario measures: records when each HTTP request
 * of a message went out and when its answer was read, from Node's diagnostics channels (node:http's
 * for Herald's clients, undici's for the reference's fetch), and writes them as JSON to
 * `HERALD_LATENCY_OUT` when the process exits. Nothing in the measured process changes but the listeners.
 */
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";

/** [epoch ms, "sent:<call>" | "read:<call>"]; the call is the Bot API method or "model". */
type Event = [number, string];
const events: Event[] = [];
const now = () => performance.timeOrigin + performance.now();
const callOf = (path: string) =>
  path.includes("/chat/completions") ? "model" : (path.split("/").pop() ?? "");

// node:http publishes "start" once a request is flushed to its socket and "finish" at the answer's end;
// undici (the built-in fetch) "sendHeaders" once the headers are written and "trailers" at the end.
const channels = [
  ["http.client.request.start", "sent"],
  ["http.client.response.finish", "read"],
  ["undici:client:sendHeaders", "sent"],
  ["undici:request:trailers", "read"],
] as const;
for (const [channel, moment] of channels) {
  subscribe(channel, (m) =>
    events.push([now(), `${moment}:${callOf((m as { request: { path: string } }).request.path)}`]),
  );
}

process.on("exit", () => {
  const out = process.env["HERALD_LATENCY_OUT"];
  if (out) writeFileSync(out, JSON.stringify(events));
});
// A process without its own SIGTERM handling (the reference) still exits through "exit".
process.on("SIGTERM", () => {
  if (process.listenerCount("SIGTERM") === 1) process.exit(0);
});
