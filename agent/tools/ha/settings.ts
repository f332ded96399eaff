/**
 * The `ha:` settings of the `ha` toolset: which Home Assistant (its address and a long-lived access
 * token), which service calls wait for the user's approval, and how long one request may take; their
 * env names, reference rows, the doctor's line and the setup question with its live check
 * (`GET /api/` answers "API running." to a good token).
 */
import { z } from "zod";
import { ConfigError, describeError } from "../../../core/errors.js";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import { CheckFailed, type SetupQuestions, type StepContext } from "../../../core/setup.js";
import { callService, checked, secret, trimUrl, tryAgain } from "../../../core/setup-steps.js";

/**
 * Calls that wait for the user's approval by default: locks, alarm panels, and covers that are doors
 * (garage doors, gates, doors). Blinds, lights, climate and media are left to the agent: a mistake
 * there is seen and undone, while an unlocked door or a disarmed alarm is a security fault.
 */
export const DEFAULT_APPROVE = ["lock", "alarm_control_panel", "cover:garage", "cover:gate", "cover:door"];

/** What to do when Home Assistant refuses the token. */
export const FIX_TOKEN =
  "create a new long-lived access token in Home Assistant (your profile → Security) and set HOMEASSISTANT_TOKEN.";

/** What to do when Home Assistant cannot be reached. */
export const FIX_URL =
  "check HOMEASSISTANT_URL (the address you open in the browser) and that Home Assistant is running and reachable from this machine.";

/** One `ha.approve` entry: a domain (`lock`), `domain:device_class` (`cover:garage`), or an entity id. */
const APPROVE_ENTRY = /^[a-z0-9_]+(?::[a-z0-9_]+|\.[a-z0-9_]+)?$/;

/** The `ha` section. */
export const haSectionSchema = z
  .strictObject({
    /** Home Assistant's address, e.g. `http://homeassistant.local:8123` (no `/api`). */
    url: z.url({ protocol: /^https?$/ }).optional(),
    /** A long-lived access token (Profile → Security → Long-lived access tokens). */
    token: z.string().min(1).optional(),
    /**
     * Service calls that wait for `/approve` when `exec.dangerous_commands` is `manual` (refused with
     * `deny`): a domain (every call of it, and every call aimed at its entities), `domain:device_class`,
     * or one entity id.
     */
    approve: z
      .array(z.string().regex(APPROVE_ENTRY, "a domain, domain:device_class or entity id"))
      .default(DEFAULT_APPROVE),
    /**
     * Who gets the toolset: `owners` (the default) or `everyone` admitted (paired users, allowlisted
     * users when `GATEWAY_OWNERS` names the owners). A user who may chat is not thereby trusted with the
     * house: held calls are approved by whoever asked.
     */
    access: z.enum(["owners", "everyone"]).default("owners"),
    /** How long one request to Home Assistant may take. */
    timeoutMs: z.number().int().positive().default(15_000),
  })
  .prefault({});

/** The parsed `ha` section. */
export type HaSection = z.output<typeof haSectionSchema>;

/** Home Assistant accepts the token: `GET /api/` answers `{"message": "API running."}`. */
export async function checkHomeAssistant(url: string, token: string): Promise<{ message: string }> {
  const answer = await callService("Home Assistant", `${trimUrl(url)}/api/`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `Home Assistant answered ${answer.status} to GET /api/: the access token is wrong or revoked. Create one in Home Assistant under your profile → Security → Long-lived access tokens.`,
    );
  }
  if (answer.status !== 200 || answer.body["message"] !== "API running.") {
    throw new CheckFailed(
      `Home Assistant answered ${answer.status} to GET /api/ instead of "API running.". Check the address (the one you open in the browser, e.g. http://homeassistant.local:8123).`,
    );
  }
  return { message: answer.body["message"] };
}

async function haStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const url = await p.text({
      key: "ha.url",
      message: "Home Assistant address, e.g. http://homeassistant.local:8123",
      initial: files.get("ha.url") as string | undefined,
    });
    if (!url) return p.say("warn", "Home Assistant skipped: no address.");
    const token = await secret(ctx, "ha.token", "HOMEASSISTANT_TOKEN", "A long-lived access token");
    if (!token.value) return p.say("warn", "Home Assistant skipped: no access token.");
    const ok = await checked(
      ctx,
      "Checking the token (GET /api/)",
      () => checkHomeAssistant(url, token.value!),
      () => `Home Assistant at ${trimUrl(url)}`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "Home Assistant settings")) continue;
      return;
    }
    files.set("ha.url", trimUrl(url));
    if (token.isNew) files.setEnv("HOMEASSISTANT_TOKEN", token.value);
    return;
  }
}

/**
 * The doctor's line: the Home Assistant the toolset talks to, checked live (`GET /api/`), or how to
 * connect one. Never throws: a failed check is a line with its fix.
 */
export async function checkHa(section: HaSection): Promise<DoctorLine> {
  if (!section.url || !section.token)
    return {
      ok: true,
      text: "ha: off (no Home Assistant configured)",
      fix: "set HOMEASSISTANT_URL and HOMEASSISTANT_TOKEN (a long-lived access token) to offer the ha toolset",
    };
  try {
    await checkHomeAssistant(section.url, section.token);
  } catch (err) {
    return {
      ok: false,
      text: `ha: ${err instanceof CheckFailed ? err.message : describeError(err)}`,
      fix: "correct HOMEASSISTANT_URL or HOMEASSISTANT_TOKEN (`herald setup` checks both)",
    };
  }
  return {
    ok: true,
    text: `ha: Home Assistant at ${section.url} (API running); approval for ${section.approve.join(", ") || "nothing"}`,
  };
}

/** The `ha` toolset's settings. */
export const haSettings = defineFeature({
  key: "ha",
  schema: haSectionSchema,
  env: {
    HOMEASSISTANT_URL: ["url", "url"],
    HOMEASSISTANT_TOKEN: ["token", "string"],
    HOMEASSISTANT_APPROVE: ["approve", "list"],
    HOMEASSISTANT_ACCESS: ["access", "string"],
  },
  resolve(section) {
    if (Boolean(section.url) !== Boolean(section.token)) {
      throw new ConfigError(
        section.url ? "HOMEASSISTANT_TOKEN" : "HOMEASSISTANT_URL",
        "HOMEASSISTANT_URL and HOMEASSISTANT_TOKEN go together. Fix: set both (Home Assistant's address and a long-lived access token from your profile → Security), or neither.",
      );
    }
    return section;
  },
  reference: {
    intro:
      "The `ha` toolset (`ha_list_entities`, `ha_get_state`, `ha_list_services`, `ha_call_service`) talks to Home Assistant over its WebSocket API; it is offered only when both the address and the token are set. Herald connects to this one address only, private or not; see [Tools](tools.md#home-assistant).",
    rows: [
      ["url", "Home Assistant's address, e.g. `http://homeassistant.local:8123`", "none (toolset off)"],
      ["token", "a long-lived access token (profile → Security)"],
      [
        "approve",
        "calls that wait for `/approve`: a domain, `domain:device_class` or an entity id",
        "`lock, alarm_control_panel, cover:garage, cover:gate, cover:door`",
      ],
      [
        "access",
        "who gets the toolset: `owners`, or `everyone` admitted (paired users too; each approves their own held calls)",
        "`owners`",
      ],
      ["timeout_ms", "one request to Home Assistant may take this long"],
    ],
  },
  doctor: async (section) => [await checkHa(section)],
  setup: {
    label: "Home Assistant (tools)",
    hint: "address + a long-lived access token",
    chosenBy: "ha.url",
    flags: [
      {
        flag: "--ha-url <url>",
        key: "ha.url",
        env: "HOMEASSISTANT_URL",
        help: "env HOMEASSISTANT_URL: Home Assistant's address",
      },
      {
        flag: "--ha-token <token>",
        key: "ha.token",
        env: "HOMEASSISTANT_TOKEN",
        help: "env HOMEASSISTANT_TOKEN: a long-lived access token",
      },
    ],
    step: haStep,
  } satisfies SetupQuestions,
});
