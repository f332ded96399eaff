/**
 * `image_generate` (toolset "image"): makes pictures from a prompt on the configured images endpoint,
 * saves each in the session's workspace (`images/`, through the execution backend's files, where the
 * commands see them) and sends them to the chat with the reply: a photo where the platform has photos,
 * a file elsewhere. The provider's token counts go to the turn's usage under `images/<model>`.
 */
import type { ToolExecute } from "../../tool-declaration.js";
import type { ToolOutput } from "../../types.js";
import { type GeneratedImage, generateImages } from "./client.js";
import type { ImageGenerateParameters, ImageToolDeps, SavedImage } from "./declaration.js";
import { IMAGES_NOT_CONFIGURED } from "./settings.js";

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
};

/** `images/<time>-<first words of the prompt>[-i].<ext>`: sorted by time, named by what they show. */
export function imageFileName(prompt: string, at: Date, index: number, count: number, mime: string): string {
  const stamp = at.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
  const slug =
    prompt
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40)
      .replace(/-+$/, "") || "image";
  const suffix = count > 1 ? `-${index + 1}` : "";
  return `images/${stamp}-${slug}${suffix}.${EXTENSIONS[mime] ?? "png"}`;
}

/** What `image_generate` does (`declaration.ts` declares it), bound to `deps`, by name. */
export function imageGenerateToolRuns(deps: ImageToolDeps) {
  const imageGenerate: ToolExecute<ImageGenerateParameters> = async (args, ctx): Promise<ToolOutput> => {
    if (!deps.endpoint) return { content: `error: ${IMAGES_NOT_CONFIGURED}.`, isError: true };
    const n = args.n ?? 1;
    ctx.progress(`🎨 making ${n === 1 ? "an image" : `${n} images`}`);
    const generation = await generateImages(deps.endpoint, {
      prompt: args.prompt,
      n,
      size: args.size,
      signal: ctx.signal,
      allowPrivate: deps.allowPrivate,
    });
    const at = new Date();
    const saved = await Promise.all(
      generation.images.map(async (image, i) => {
        const rel = imageFileName(args.prompt, at, i, generation.images.length, image.mime);
        return { image, rel, where: await deps.save(rel, image.bytes, ctx) };
      }),
    );
    const u = generation.usage;
    return {
      content: describe(saved, args.prompt),
      files: saved.map(({ image, rel, where }) => ({
        path: where.outgoing,
        fileName: rel.slice("images/".length),
        mimeType: image.mime,
      })),
      usage: [
        {
          model: `images/${deps.endpoint.model}`,
          promptTokens: u?.inputTokens ?? 0,
          completionTokens: u?.outputTokens ?? 0,
          cachedTokens: 0,
          calls: 1,
        },
      ],
    };
  };
  return { image_generate: imageGenerate };
}

function describe(saved: { image: GeneratedImage; where: SavedImage }[], prompt: string): string {
  const lines = saved.map(({ image, where }, i) => {
    const revised =
      image.revisedPrompt && image.revisedPrompt !== prompt ? ` (drawn as: ${image.revisedPrompt})` : "";
    return `${i + 1}. ${where.shown} (${image.mime}, ${image.bytes.byteLength} bytes)${revised}`;
  });
  const what = saved.length === 1 ? "1 image" : `${saved.length} images`;
  return [`Made ${what}; they are sent to the user with your reply.`, ...lines].join("\n");
}
