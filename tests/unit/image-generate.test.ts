/**
 * `image_generate` on its own, against the fake images server: the fake speaks the protocol the
 * `openai` SDK's `images.generate` expects (b64 and URL answers, real PNG bytes); the tool saves each
 * image in the workspace and hands the outbox a copy, names keys on refusals, and says how to configure
 * itself without a section.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WorkspaceAccess, WorkspaceManager } from "../../agent/exec/index.js";
import { generateImages } from "../../agent/tools/image/client.js";
import { imageGenerateTool, workspaceSaver } from "../../agent/tools/image/index.js";
import { imageFileName } from "../../agent/tools/image/tool.js";
import type { ToolContext, ToolOutput } from "../../agent/types.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeImages, pngSize, startFakeImages } from "../fakes/images/index.js";

let fake: FakeImages;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "herald-images-"));
});
afterEach(async () => {
  await fake?.close();
  await rm(home, { recursive: true, force: true });
});

function context(): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: "s1",
      sessionKey: "telegram:dm:111",
      chat: { platform: "telegram", chatId: "111" },
      chatType: "dm",
      userId: "111",
    },
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: home,
    progress: () => {},
  };
}

function tool(endpoint: Parameters<typeof generateImages>[0] | undefined, allowPrivate = false) {
  const workspaces = new WorkspaceManager({ rootDir: join(home, "workspaces"), logger: silentLogger() });
  const access = new WorkspaceAccess({ workspaces });
  return {
    access,
    tool: imageGenerateTool({ endpoint, allowPrivate, save: workspaceSaver(access, join(home, "cache")) }),
  };
}

async function run(t: ReturnType<typeof tool>["tool"], args: unknown): Promise<ToolOutput> {
  const out = await t.execute(t.parameters.parse(args), context());
  return typeof out === "string" ? { content: out } : out;
}

describe("the fake images server", () => {
  it("answers the openai SDK's images.generate with real PNGs, as b64_json and as URLs", async () => {
    fake = await startFakeImages({ apiKey: "sk-img" });
    const client = new OpenAI({ baseURL: fake.baseUrl, apiKey: "sk-img", maxRetries: 0 });
    const b64 = await client.images.generate({
      model: "gpt-image-1",
      prompt: "a red fox",
      n: 2,
      size: "1024x1024",
    });
    expect(b64.data).toHaveLength(2);
    const png = Buffer.from(b64.data?.[0]?.b64_json ?? "", "base64");
    expect(pngSize(png)).toEqual({ width: 256, height: 256 });
    expect(b64.usage?.output_tokens).toBe(544);
    expect(fake.generations[0]).toMatchObject({
      model: "gpt-image-1",
      prompt: "a red fox",
      n: 2,
      size: "1024x1024",
    });
    await fake.close();

    fake = await startFakeImages({ answer: "url" });
    const urls = await new OpenAI({ baseURL: fake.baseUrl, apiKey: "x" }).images.generate({
      prompt: "a boat",
    });
    const url = urls.data?.[0]?.url ?? "";
    const res = await fetch(url);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(pngSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 64, height: 64 });
  });

  it("refuses a wrong key with 401, which the SDK raises as AuthenticationError", async () => {
    fake = await startFakeImages({ apiKey: "sk-right" });
    const client = new OpenAI({ baseURL: fake.baseUrl, apiKey: "sk-wrong", maxRetries: 0 });
    await expect(client.images.generate({ prompt: "x" })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe("image_generate", () => {
  it("saves the images in the workspace's images/ and sends a copy of each with the reply", async () => {
    fake = await startFakeImages({ apiKey: "sk-img" });
    const { tool: t, access } = tool({
      baseUrl: fake.baseUrl,
      apiKey: "sk-img",
      model: "gpt-image-1",
      size: "128x128",
    });
    const out = await run(t, { prompt: "A lighthouse at dusk!", n: 2 });
    expect(out.isError).toBeFalsy();
    expect(fake.generations[0]).toMatchObject({ prompt: "A lighthouse at dusk!", n: 2, size: "128x128" });
    expect(out.files).toHaveLength(2);
    expect(out.content).toMatch(/^Made 2 images; they are sent to the user with your reply\./);
    const ws = await access.open({ sessionKey: "telegram:dm:111" });
    for (const [i, file] of (out.files ?? []).entries()) {
      expect(file.mimeType).toBe("image/png");
      expect(file.fileName).toMatch(new RegExp(`^\\d{8}-\\d{6}-a-lighthouse-at-dusk-${i + 1}\\.png$`));
      const sent = await readFile(file.path);
      expect(pngSize(sent)).toEqual({ width: 128, height: 128 });
      expect(file.path.startsWith(join(home, "cache", "outgoing"))).toBe(true);
      const inWorkspace = await ws.files.read(`images/${file.fileName}`, { offset: 0, length: 1 << 20 });
      expect(Buffer.from(inWorkspace).equals(sent)).toBe(true);
      expect(out.content).toContain(ws.shown(`images/${file.fileName}`));
    }
    expect(out.usage).toEqual([
      { model: "images/gpt-image-1", promptTokens: 4, completionTokens: 544, cachedTokens: 0, calls: 1 },
    ]);
  });

  it("downloads URL answers through the guarded fetch: refused on loopback unless private addresses are allowed", async () => {
    fake = await startFakeImages({ answer: "url" });
    const endpoint = { baseUrl: fake.baseUrl, model: "dall-e-3" };
    await expect(run(tool(endpoint).tool, { prompt: "a cat" })).rejects.toThrow(
      /private|loopback|127\.0\.0\.1/i,
    );
    const out = await run(tool(endpoint, true).tool, { prompt: "a cat" });
    expect(pngSize(await readFile(out.files?.[0]?.path ?? ""))).toEqual({ width: 64, height: 64 });
    expect(out.content).toContain("drawn as: a cat, as a flat colour");
  });

  it("names images.api_key on 401 and gives the provider's reason on 400", async () => {
    fake = await startFakeImages({ apiKey: "sk-right" });
    await expect(
      generateImages({ baseUrl: fake.baseUrl, apiKey: "sk-old", model: "m" }, { prompt: "x", n: 1 }),
    ).rejects.toMatchObject({
      code: "unauthorized",
      message: expect.stringMatching(/images\.api_key.*HERALD_IMAGES_KEY/),
    });
    fake.fail({ status: 400, message: "Your request was rejected by the safety system." });
    await expect(
      generateImages(
        { baseUrl: fake.baseUrl, apiKey: "sk-right", model: "m" },
        { prompt: "x", n: 1, maxRetries: 0 },
      ),
    ).rejects.toMatchObject({ code: "invalid_input", message: expect.stringMatching(/safety system/) });
  });

  it("retries a 500 and then succeeds", async () => {
    fake = await startFakeImages();
    fake.fail({ status: 500, message: "overloaded" });
    const made = await generateImages({ baseUrl: fake.baseUrl, model: "m" }, { prompt: "a tree", n: 1 });
    expect(made.images).toHaveLength(1);
    expect(fake.generations).toHaveLength(1);
  });

  it("without an images section says how to configure one, without a request", async () => {
    const out = await run(tool(undefined).tool, { prompt: "anything" });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/HERALD_IMAGES_URL, HERALD_IMAGES_MODEL and HERALD_IMAGES_KEY/);
  });

  it("refuses more images than allowed and sizes that are not WxH", () => {
    const { tool: t } = tool(undefined);
    expect(t.parameters.safeParse({ prompt: "x", n: 5 }).success).toBe(false);
    expect(t.parameters.safeParse({ prompt: "x", size: "big" }).success).toBe(false);
    expect(imageFileName("Ünïcode — ☃ only", new Date("2026-01-02T03:04:05Z"), 0, 1, "image/jpeg")).toBe(
      "images/20260102-030405-unicode-only.jpg",
    );
    expect(imageFileName("☃", new Date("2026-01-02T03:04:05Z"), 0, 1, "image/png")).toBe(
      "images/20260102-030405-image.png",
    );
  });
});
