/**
 * Closing a Redis connection at shutdown. `disconnect()` alone rejects the replies the connection still
 * waits for with "Connection is closed.", and at shutdown nothing may be left to handle them (a library's
 * own fire-and-forget call becomes an unhandled rejection): `QUIT` lets them come back first.
 */

/** What is closed: an ioredis client (typed by shape, so this module needs no Redis library). */
export interface ClosableConnection {
  quit(): Promise<unknown>;
  disconnect(): void;
}

/** Closes `connection` after its pending replies; a server that does not answer within `waitMs` is not waited for. */
export async function closeConnection(connection: ClosableConnection, waitMs = 1000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
    timer.unref();
  });
  await Promise.race([connection.quit().catch(() => undefined), late]);
  clearTimeout(timer);
  connection.disconnect();
}
