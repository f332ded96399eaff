/** The `skills:` settings: the JSON indexes `herald skills search` and `skills_list` (remote) look through. */
import { z } from "zod";
import { defineFeature } from "../core/settings.js";

/** The skills section. */
export const skillsSettings = defineFeature({
  key: "skills",
  schema: z
    .strictObject({
      /** URLs of JSON skill indexes (see skills/remote-index.ts). */
      sources: z.array(z.url({ protocol: /^https?$/ })).default([]),
    })
    .prefault({}),
  env: {
    HERALD_SKILLS_SOURCES: ["sources", "list"],
  },
  reference: {
    rows: [
      [
        "sources",
        'URLs of JSON skill indexes `herald skills search` and the agent tool `skills_list` (remote) look through: `{"skills": [{"name", "description", "source", "tags"?}]}`, where `source` is what `herald skills install` takes',
        "none",
      ],
    ],
  },
});
