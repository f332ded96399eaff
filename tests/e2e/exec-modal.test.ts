/**
 * The Modal backend as far as it can be faked here: Modal's SDK speaks gRPC (its protocol buffers are
 * internal to the SDK), so no fake API answers it. What is checked: the driver loads Modal's real SDK,
 * which dials the address configured (`exec.modal.server_url`, MODAL_SERVER_URL) with HTTP/2 and
 * the token; a server that closes the connection leaves the backend unavailable with the reason.
 */
import { createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createModalDriver } from "../../agent/exec/cloud-modal.js";

describe("the Modal backend", () => {
  it("dials the configured Modal address over HTTP/2 and reports it unavailable when nothing answers", async () => {
    const prefaces: string[] = [];
    const server = createServer((socket: Socket) => {
      socket.once("data", (data: Buffer) => {
        prefaces.push(data.subarray(0, 14).toString("latin1"));
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const before = process.env.MODAL_SERVER_URL;
    try {
      const backend = new CloudBackend({
        provider: "modal",
        workdir: "/workspace",
        rateLimitTries: 1,
        driver: () =>
          createModalDriver({
            tokenId: "ak-test",
            tokenSecret: "as-test",
            serverUrl: `http://127.0.0.1:${port}`,
            idleStopMs: 60_000,
          }),
      });
      const availability = await backend.checkAvailable();
      expect(availability).toMatchObject({
        available: false,
        missing: expect.stringMatching(/modal sandbox API cannot be used: .*UNAVAILABLE/),
      });
      expect(prefaces.length).toBeGreaterThan(0);
      expect(prefaces[0]).toBe("PRI * HTTP/2.0");
      await backend.close();
    } finally {
      if (before === undefined) delete process.env.MODAL_SERVER_URL;
      else process.env.MODAL_SERVER_URL = before;
      server.close();
    }
  }, 60_000);
});
