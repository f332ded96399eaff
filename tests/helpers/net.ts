/** Network helpers for tests that start real servers on the loopback interface. */
import { createServer } from "node:net";

/**
 * A loopback port that was free a moment ago: the kernel picks it and we release it for the server
 * under test (or for a client that must find nothing listening). Rejects if no port can be bound.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
