/**
 * The socket home-assistant-js-websocket runs on, in Node: its own `createSocket` needs a browser's
 * global `WebSocket` (Node 20 has none), so this one opens the `ws` library's, which has the same
 * event-target interface, and does the auth phase of the protocol: `auth_required` → `auth` with the
 * token → `auth_ok` (resolves with the socket) or `auth_invalid` (rejects with ERR_INVALID_AUTH, never
 * retried). A socket that neither opens nor authenticates within `timeoutMs` is closed and rejects
 * with ERR_CANNOT_CONNECT. Both libraries are imported on the first connection.
 */
import type { ConnectionOptions, HaWebSocket } from "home-assistant-js-websocket";

/** `ERR_CANNOT_CONNECT` and `ERR_INVALID_AUTH` of home-assistant-js-websocket (its error codes). */
export const ERR_CANNOT_CONNECT = 1;
export const ERR_INVALID_AUTH = 2;
export const ERR_CONNECTION_LOST = 3;

/** A `createSocket` for `createConnection` that opens a `ws` WebSocket to `wsUrl` with `token`. */
export function wsSocketFactory(
  wsUrl: string,
  token: string,
  timeoutMs: number,
): (options: ConnectionOptions) => Promise<HaWebSocket> {
  return async () => {
    const { WebSocket } = await import("ws");
    return new Promise<HaWebSocket>((resolve, reject) => {
      const socket = new WebSocket(wsUrl, { handshakeTimeout: timeoutMs });
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.off("message", onMessage);
        outcome();
      };
      const timer = setTimeout(() => {
        finish(() => reject(ERR_CANNOT_CONNECT));
        socket.terminate();
      }, timeoutMs);
      const onMessage = (data: unknown) => {
        let message: { type?: unknown; ha_version?: unknown };
        try {
          message = JSON.parse(String(data)) as typeof message;
        } catch {
          return;
        }
        if (message.type === "auth_required")
          socket.send(JSON.stringify({ type: "auth", access_token: token }));
        else if (message.type === "auth_invalid") {
          finish(() => reject(ERR_INVALID_AUTH));
          socket.close();
        } else if (message.type === "auth_ok") {
          const ha = socket as unknown as HaWebSocket;
          ha.haVersion = typeof message.ha_version === "string" ? message.ha_version : "0.0.0";
          finish(() => resolve(ha));
        }
      };
      socket.on("message", onMessage);
      // Kept for the socket's life: an `error` event without a listener would throw.
      socket.on("error", () => finish(() => reject(ERR_CANNOT_CONNECT)));
      socket.once("close", () => finish(() => reject(ERR_CANNOT_CONNECT)));
    });
  };
}
