/**
 * The `images:` settings of `image_generate`: an OpenAI-compatible `/images/generations` endpoint (the
 * section, its env names and reference rows, and the doctor's line).
 */
import { z } from "zod";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";

/** A size as the images endpoints take it: `1024x1024`, `1536x1024`, or `auto`. */
export const IMAGE_SIZE = /^(auto|\d{2,5}x\d{2,5})$/;

/** The `images` section; absent: `image_generate` says how to configure it. */
export const imagesSectionSchema = z
  .strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    apiKey: z.string().min(1).optional(),
    model: z.string().min(1),
    size: z.string().regex(IMAGE_SIZE, "a size such as 1024x1024 or auto").optional(),
    maxImages: z.number().int().min(1).max(10).default(4),
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .optional();

/** The parsed `images` section. */
export type ImagesSection = z.output<typeof imagesSectionSchema>;

/** `image_generate` (reads `config.images`): the images endpoint, or how to add one. */
export function checkImages(config: { images?: ImagesSection }): DoctorLine {
  if (!config.images)
    return {
      ok: true,
      text: "image_generate: no images endpoint (the tool answers how to configure one)",
      fix: "set HERALD_IMAGES_URL, HERALD_IMAGES_MODEL and HERALD_IMAGES_KEY (images: in config.yaml)",
    };
  return { ok: true, text: `image_generate: ${config.images.model} at ${config.images.baseUrl}` };
}

/** The images endpoint. */
export const imagesSettings = defineFeature({
  key: "images",
  schema: imagesSectionSchema,
  env: {
    HERALD_IMAGES_URL: ["base_url", "url"],
    HERALD_IMAGES_KEY: ["api_key", "string"],
    HERALD_IMAGES_MODEL: ["model", "string"],
  },
  reference: {
    intro:
      "`image_generate` makes pictures on an OpenAI-compatible `POST {base_url}/images/generations` (OpenAI, OpenRouter-style gateways, LocalAI, a self-hosted Stable Diffusion API). The images are saved in the session's workspace and sent to the chat as photos.",
    rows: [
      [
        "base_url",
        "an OpenAI-compatible `/v1` with `/images/generations`",
        "none (`image_generate` says how to configure it)",
      ],
      ["api_key", ""],
      ["model", "e.g. `gpt-image-1`, `dall-e-3`"],
      ["size", "the size asked when the model names none, e.g. `1024x1024`", "the provider's"],
      ["max_images", "most images one call may ask for (1–10)"],
      ["timeout_ms", "one request may take this long"],
    ],
  },
  doctor: (section) => [checkImages({ images: section })],
});

/** Why the tool cannot work, and the fix; also what doctor prints. */
export const IMAGES_NOT_CONFIGURED =
  "image_generate needs an images endpoint: configure images: in config.yaml (base_url, model, api_key) or set HERALD_IMAGES_URL, HERALD_IMAGES_MODEL and HERALD_IMAGES_KEY";
