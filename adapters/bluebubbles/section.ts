/** The `bluebubbles:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `bluebubbles:` section of config.yaml. */
export const bluebubblesSchema = platformSection({
  /** The BlueBubbles server's address, e.g. `https://bb.example.com`. */
  url: z.url().optional(),
  /** The server password (BlueBubbles app → Settings). */
  password: z.string().min(1).optional(),
  /** Words that address Herald in group chats. @defaultValue ["herald"] */
  names: z.array(z.string().min(1)).default(["herald"]),
  /** Send through the Private API (typing bubbles; needs the helper bundle). @defaultValue false */
  privateApi: z.boolean().default(false),
});

/** The parsed `bluebubbles:` section. */
export type BlueBubblesSection = z.infer<typeof bluebubblesSchema>;
