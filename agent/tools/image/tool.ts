/**
 * `image_generate` (toolset "image"): makes pictures from a prompt on the configured images endpoint,
 * saves each in the session's workspace (`images/`, through the execution backend's files, where the
 * commands see them) and sends them to the chat with the reply: a photo where the platform has photos,
 * a file elsewhere. The provider's token counts go to the turn's usage under `images/<model>`.
 */
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext, ToolOutput } from "../../types.js";
import type { AllowPrivate } from "../web/types.js";
import { type GeneratedImage, generateImages, type ImagesEndpoint } from "./client.js";
import { IMAGE_SIZE } from "./settings.js";

/** Why the tool cannot work, and the fix; also what doctor prints. */
export const IMAGES_NOT_CONFIGURED =
  "image_generate needs an images endpoint: configure images: in config.yaml (base_url, model, api_key) or set HERALD_IMAGES_URL, HERALD_IMAGES_MODEL and HERALD_IMAGES_KEY";

/** Where a saved image is: as the model sees it in the workspace, and the copy the outbox sends. */
export interface SavedImage {
  shown: string;
  outgoing: string;
}

/** What `image_generate` runs with. */
export interface ImageToolDeps {
  /** The images endpoint; undefined when `images` is not configured (the tool then says how to). */
  endpoint: ImagesEndpoint | undefined;
  /** Most images one call may ask for. @defaultValue 4 */
  maxImages?: number | undefined;
  /**
   * Saves an image as `rel` (a workspace-relative path) in the session's workspace and as a copy the
   * outbox sends; throws a HeraldError saying why not (quota, backend).
   */
  save: (rel: string, bytes: Uint8Array, ctx: ToolContext) => Promise<SavedImage>;
  /** Let image URLs the provider answers reach private addresses. @defaultValue false */
  allowPrivate?: AllowPrivate | undefined;
}

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

/** `image_generate`, bound to `deps`. */
export function imageGenerateTool(deps: ImageToolDeps): Tool {
  const maxImages = deps.maxImages ?? 4;
  return defineTool({
    name: "image_generate",
    description:
      "Make a picture from a description. The images are saved in the workspace (images/) and sent to the user with your reply; don't describe them at length unless asked.",
    parameters: z.object({
      prompt: z.string().min(1).max(4000).describe("What the picture shows: subject, style, composition."),
      size: z
        .string()
        .regex(IMAGE_SIZE, "a size such as 1024x1024, 1536x1024, 1024x1536 or auto")
        .optional()
        .describe("WIDTHxHEIGHT, e.g. 1024x1024 (default: the configured size)."),
      n: z.number().int().min(1).max(maxImages).optional().describe(`How many images (1-${maxImages}).`),
    }),
    toolset: "image",
    label: (args) => `🎨 ${args.prompt.slice(0, 60)}${args.prompt.length > 60 ? "…" : ""}`,
    async execute(args, ctx): Promise<ToolOutput> {
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
    },
  });
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
