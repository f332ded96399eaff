/** The `dashboard:` settings of the web dashboard at /dashboard (on the API server's host and port). */
import { z } from "zod";
import { defineFeature } from "../../core/settings.js";

/** The dashboard. */
export const dashboardSettings = defineFeature({
  key: "dashboard",
  schema: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** The login password (API_SERVER_KEY logs in too); without either, only loopback is served. */
      password: z.string().min(12, "must be at least 12 characters").optional(),
      /** How long a login lasts, in hours. */
      sessionHours: z.number().positive().max(720).default(12),
    })
    .prefault({}),
  env: {
    DASHBOARD_ENABLED: ["enabled", "bool"],
    DASHBOARD_PASSWORD: ["password", "string"],
    DASHBOARD_SESSION_HOURS: ["session_hours", "int"],
  },
  reference: {
    rows: [
      ["enabled", "serve `/dashboard`"],
      [
        "password",
        "at least 12 characters; `API_SERVER_KEY` logs in too; without either only loopback is served",
      ],
      ["session_hours", "how long a login lasts"],
    ],
  },
});
