/**
 * `vision_analyze` end to end: the main model (scripted) asks about an image, Herald sends the image's
 * bytes as a `data:` URL to an auxiliary vision model (a second scripted OpenAI-compatible server with
 * its own key and model), and the main model gets the answer. Images come from a Telegram photo (the
 * path in the attachment note) or a URL (through the guarded fetch: loopback refused unless allowed).
 * Without a `vision:` section the tool says how to configure one.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeLlm, type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { chat } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
let vision: FakeLlm | undefined;
let images: Server | undefined;
afterEach(async () => {
  await vision?.close();
  images?.closeAllConnections();
  await new Promise((r) => (images ? images.close(r) : r(undefined)));
  vision = undefined;
  images = undefined;
});

/** A real 16×16 PNG made by ffmpeg. */
function makePng(): Buffer {
  const out = join(mkdtempSync(join(tmpdir(), "herald-png-")), "red.png");
  execFileSync("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=red:s=16x16", "-frames:v", "1", out]);
  return readFileSync(out);
}

async function serveImage(png: Buffer): Promise<string> {
  images = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-length": png.length });
    res.end(png);
  });
  await new Promise<void>((r) => images!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(images.address() as AddressInfo).port}/board.png`;
}

async function startVision(): Promise<FakeLlm> {
  vision = await startFakeLlm({ apiKey: "vision-key", models: ["eye-1"] });
  return vision;
}

const visionEnv = (v: FakeLlm) => ({
  HERALD_VISION_URL: v.url,
  HERALD_VISION_KEY: "vision-key",
  HERALD_VISION_MODEL: "eye-1",
});

/** The image part the vision model received, decoded. */
function sentImage(request: FakeLlmRequest): { mime: string; bytes: Buffer; question: string } {
  const content = request.messages[0]!.content as {
    type: string;
    text?: string;
    image_url?: { url: string };
  }[];
  const url = content.find((p) => p.type === "image_url")!.image_url!.url;
  const m = /^data:([^;]+);base64,(.*)$/.exec(url)!;
  return { mime: m[1]!, bytes: Buffer.from(m[2]!, "base64"), question: messageText(request.messages[0]) };
}

const toolResult = (request: FakeLlmRequest | undefined) =>
  String(request?.messages.find((m) => m.role === "tool")?.content ?? "");

describe("vision_analyze", () => {
  it.each([
    ["in the sandbox", {}],
    // No Docker engine here: the terminal and file tools are off, attachments still go to the workspace.
    ["with the terminal tools off", { HERALD_EXEC_BACKEND: "docker" }],
  ])(
    "reads a photo sent on Telegram and gives the vision model's answer to the main model (%s)",
    async (_, env) => {
      const v = await startVision();
      v.script({ text: "A red square, no writing on it." });
      const { fake, h } = await startTelegramGateway(running, { ...visionEnv(v), ...env });
      const png = makePng();
      const photo = fake.addFile(png, "photos/board.png");
      const update = await fixture("private-photo");
      (update["message"] as Record<string, unknown>)["photo"] = [{ ...photo, width: 16, height: 16 }];
      h.llm.script(
        (request) => {
          // The model finds the photo where the attachment note says it is.
          const note = /\[attached image: [^,]+, [^,]+, ([^\]]+)\]/.exec(
            messageText(request.messages.at(-1)),
          );
          return {
            toolCalls: [
              {
                name: "vision_analyze",
                arguments: { image: note?.[1] ?? "missing", question: "What is on this board?" },
              },
            ],
          };
        },
        { text: "It is a plain red square." },
      );
      fake.pushUpdate(update);
      // The progress line (👁️ and the image's path) may come first: wait for the answer itself.
      await vi.waitFor(
        () => expect(fake.botMessages(111).map((m) => m.text)).toContain("It is a plain red square."),
        {
          timeout: 10_000,
        },
      );
      expect(v.requests).toHaveLength(1);
      expect(v.requests[0]!.model).toBe("eye-1");
      const sent = sentImage(v.requests[0]!);
      expect(sent.mime).toBe("image/png");
      expect(sent.bytes.equals(png)).toBe(true);
      expect(sent.question).toBe("What is on this board?");
      expect(toolResult(h.llm.requests[1])).toContain("A red square, no writing on it.");
    },
  );

  it("refuses an image URL on a loopback address by default (the guarded fetch), and asks nothing", async () => {
    const v = await startVision();
    v.script({ text: "A red square." });
    const png = makePng();
    const url = await serveImage(png);
    const guarded = await running.startHarness({ env: visionEnv(v) });
    guarded.llm.script(
      { toolCalls: [{ name: "vision_analyze", arguments: { image: url, question: "colour?" } }] },
      { text: "done" },
    );
    await chat(guarded, "look at this");
    expect(toolResult(guarded.llm.requests[1])).toMatch(/error: .*127\.0\.0\.1/);
    expect(v.requests).toHaveLength(0);
  });

  it("sends a URL's image bytes when private addresses are allowed", async () => {
    const v = await startVision();
    v.script({ text: "A red square." });
    const png = makePng();
    const url = await serveImage(png);
    const h = await running.startHarness({ env: { ...visionEnv(v), HERALD_WEB_ALLOW_PRIVATE: "true" } });
    h.llm.script(
      { toolCalls: [{ name: "vision_analyze", arguments: { image: url, question: "colour?" } }] },
      { text: "red" },
    );
    expect((await chat(h, "look at this")).text).toBe("red");
    expect(sentImage(v.requests[0]!).bytes.equals(png)).toBe(true);
    expect(toolResult(h.llm.requests[1])).toContain("A red square.");
  });

  it("without a vision section, tells the model how to configure one", async () => {
    const h = await running.startHarness();
    h.llm.script(
      {
        toolCalls: [
          { name: "vision_analyze", arguments: { image: "https://example.org/x.png", question: "?" } },
        ],
      },
      { text: "cannot see" },
    );
    await chat(h, "look");
    expect(toolResult(h.llm.requests[1])).toMatch(/configure vision: in config\.yaml.*HERALD_VISION_URL/);
  });
});
