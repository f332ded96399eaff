/**
 * The `vision:` settings of `vision_analyze`'s auxiliary model (OpenAI-compatible chat completions with
 * images): the section, its env names and reference rows, and the doctor's line.
 */
import { z } from "zod";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";

/** The `vision` section; absent: the tool says how to configure it. */
export const visionSectionSchema = z
  .strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    apiKey: z.string().min(1).optional(),
    model: z.string().min(1),
    timeoutMs: z.number().int().positive().optional(),
  })
  .optional();

/** The parsed `vision` section. */
export type VisionSection = z.output<typeof visionSectionSchema>;

/** `vision_analyze` (reads `config.vision`): the auxiliary vision model, or how to add one. */
export function checkVision(config: { vision?: VisionSection }): DoctorLine {
  if (!config.vision)
    return {
      ok: true,
      text: "vision_analyze: no vision model (the tool answers how to configure one)",
      fix: "set HERALD_VISION_URL, HERALD_VISION_MODEL and HERALD_VISION_KEY (vision: in config.yaml)",
    };
  return { ok: true, text: `vision_analyze: ${config.vision.model} at ${config.vision.baseUrl}` };
}

/** The vision model. */
export const visionSettings = defineFeature({
  key: "vision",
  schema: visionSectionSchema,
  env: {
    HERALD_VISION_URL: ["base_url", "url"],
    HERALD_VISION_KEY: ["api_key", "string"],
    HERALD_VISION_MODEL: ["model", "string"],
  },
  reference: {
    rows: [
      [
        "base_url",
        "an OpenAI-compatible `/v1` whose model takes images",
        "none (`vision_analyze` says how to configure it)",
      ],
      ["api_key", ""],
      ["model", "e.g. `gpt-4o-mini`"],
      ["timeout_ms", "", "`60000`"],
    ],
  },
  doctor: (section) => [checkVision({ vision: section })],
});

/** Why the tool is off, and the fix; also what doctor prints. */
export const VISION_NOT_CONFIGURED =
  "vision_analyze needs a vision model: configure vision: in config.yaml (base_url, model, api_key) or set HERALD_VISION_URL, HERALD_VISION_MODEL and HERALD_VISION_KEY";
