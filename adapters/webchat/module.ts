/** The web chat as a platform module: the browser page at `/chat` of the gateway's HTTP server. */
import { ConfigError } from "../../core/errors.js";
import { definePlatform } from "../../core/platform.js";
import { webSchema } from "./section.js";
import { webSetup } from "./setup.js";

/** The web chat. */
export const webchatPlatform = definePlatform({
  name: "webchat",
  schema: webSchema,
  // Its pages read the runner's sessions and command menu: it starts with the runner.
  withRunner: true,
  singleAccount:
    "the web chat is Herald's own page (`/chat`), one per gateway; its users are invited, not bots",
  env: {
    WEBCHAT_ENABLED: ["enabled", "bool"],
    WEBCHAT_LOGIN_DAYS: ["login_days", "int"],
    WEBCHAT_INVITE_HOURS: ["invite_hours", "int"],
  },
  isConfigured: (c) => c.enabled,
  async create(c, deps) {
    const services = deps.services?.webchat;
    if (!services)
      throw new ConfigError(
        "WEBCHAT_ENABLED",
        "The web chat is served by `herald gateway` with its HTTP server; this process has none. Fix: run it in the gateway, with API_SERVER_ENABLED on.",
      );
    const { createWebAdapter } = await import("./index.js");
    return createWebAdapter(
      { loginTtlMs: c.loginDays * 86_400_000, inviteTtlMs: c.inviteHours * 3_600_000 },
      { ...deps, services },
    );
  },
  reference: {
    rows: [
      ["enabled", "serve the web chat at `/chat` (the API server's host and port)"],
      [
        "allowed_users",
        "`owner` (the password login: `DASHBOARD_PASSWORD` or `API_SERVER_KEY`); invited users are paired",
        "`[owner]`",
      ],
      ["login_days", "how long a login lasts"],
      ["invite_hours", "how long an invite link stays valid"],
    ],
  },
  setup: webSetup,
  promptHint:
    "You are replying in a web chat: Markdown renders (headings, lists, tables, fenced code, links); files you send can be downloaded.",
});
