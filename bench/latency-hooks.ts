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

// node:http: "start" is published once the request is flushed to its socket, "finish" at the answer's end.
subscribe("http.client.request.start", (m) =>
  events.push([now(), `sent:${callOf((m as { request: { path: string } }).request.path)}`]),
);
subscribe("http.client.response.finish", (m) =>
  events.push([now(), `read:${callOf((m as { request: { path: string } }).request.path)}`]),
);
// undici (the built-in fetch): headers written, then the answer's end.
subscribe("undici:client:sendHeaders", (m) =>
  events.push([now(), `sent:${callOf((m as { request: { path: string } }).request.path)}`]),
);
subscribe("undici:request:trailers", (m) =>
  events.push([now(), `read:${callOf((m as { request: { path: string } }).request.path)}`]),
);

process.on("exit", () => {
  const out = process.env["HERALD_LATENCY_OUT"];
  if (out) writeFileSync(out, JSON.stringify(events));
});
// A process without its own SIGTERM handling (the reference) still exits through "exit".
process.on("SIGTERM", () => {
  if (process.listenerCount("SIGTERM") === 1) process.exit(0);
});
