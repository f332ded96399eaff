/** The `matrix:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";
import { streamSetting } from "../shared/reply-stream.js";

/** The `matrix:` section of config.yaml. */
export const matrixSchema = platformSection({
  homeserver: z.url().optional(),
  accessToken: z.string().min(1).optional(),
  userId: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  stream: streamSetting,
  encryption: z.boolean().default(false),
  storeKey: z.string().min(1).optional(),
});

/** The parsed `matrix:` section. */
export type MatrixSection = z.infer<typeof matrixSchema>;
