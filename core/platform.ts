/**
 * The platform module contract: everything Herald knows of a platform comes from its module (its
 * config section and env names, whether it is configured, how its adapter is built, how its user and
 * chat ids read, how replies render there, its rows of the configuration reference, its `herald setup`
 * step and its `herald doctor` lines). The composition root lists the modules; config, access, the
 * adapter registry, the prompt hints, setup, doctor and docs/configuration.md are built from that list.
 */
import { z } from "zod";
import type { ConfigReference, DoctorContext, DoctorLine, EnvTable } from "./settings.js";
import type { SetupQuestions } from "./setup.js";
import type { AdapterDeps, PlatformAdapter } from "./types.js";

export type { EnvKind } from "./settings.js";

/** The settings every platform section has (`<platform>:` in config.yaml, `<P>_…` in the environment). */
export interface PlatformCommonConfig {
  /** User ids admitted on this platform (bare ids). */
  allowedUsers: string[];
  /** Where scheduled reports go by default (`/sethome` overrides it). */
  homeChannel?: string | undefined;
  /** In groups, answer only when addressed. @defaultValue true */
  requireMention: boolean;
  /** Toolsets enabled here; absent: the global default. */
  toolsets?: string[] | undefined;
}

/** The zod shape of {@link PlatformCommonConfig}; platform sections extend it. */
export const platformCommonShape = {
  allowedUsers: z.array(z.string()).default([]),
  homeChannel: z.string().min(1).optional(),
  requireMention: z.boolean().default(true),
  toolsets: z.array(z.string()).optional(),
  /**
   * Further bot accounts, each this section's keys over the section's own (the config loader takes
   * them out and reads each by the platform's schema: app/config-accounts.ts).
   */
  accounts: z.array(z.looseObject({ name: z.string() })).optional(),
};

/** The reference rows of the common settings (`<P>_…` names are added for each platform). */
export const platformCommonReference: ConfigReference = {
  title: "Every platform",
  intro:
    "Each platform section (`telegram:`, `discord:` …) has these besides its own keys; `<P>` is the platform's\nname in capitals.",
  rows: [
    ["allowed_users", "user ids admitted on this platform"],
    ["home_channel", "where scheduled reports go by default (`/sethome` overrides it)"],
    ["require_mention", "in groups, answer only when addressed"],
    ["toolsets", "toolsets enabled on this platform", "`agent.toolsets`"],
    [
      "accounts",
      "further bot accounts of the platform, each `{ name, …keys of this section }` over the section's keys (never its token, webhook URL or secret), each its own adapter with chats `<platform>@<name>:<id>` and webhook `/webhooks/<platform>@<name>`; its variables are the platform's with the name after the prefix (`<P>_<NAME>_…`); refused by WhatsApp and the web chat; see [Agents and bot accounts](agents.md)",
      "none",
    ],
  ],
};

/**
 * A platform's config section: the common settings plus `shape`, unknown keys refused, every key
 * optional or defaulted (an unconfigured platform parses from nothing).
 */
export function platformSection<S extends z.ZodRawShape>(shape: S) {
  // `{}` parses for every section (each key is optional or defaulted); zod cannot see that through `S`.
  return z.strictObject({ ...platformCommonShape, ...shape }).prefault({} as never);
}

/** Splits what follows `platform:` in a chat string into chat and thread. */
export type ChatIdSplitter = (rest: string) => { chatId: string; threadId?: string };

/** One platform. `C` is its parsed config section. */
export interface PlatformModule<C extends PlatformCommonConfig = PlatformCommonConfig> {
  /** As in chat strings, config sections and env prefixes (`telegram`, `TELEGRAM_…`). */
  readonly name: string;
  /** Its config.yaml section (keys camelCase once loaded), built with {@link platformSection}. */
  readonly schema: z.ZodType<C>;
  /**
   * Env names and the section key each sets (snake_case, as written in config.yaml), besides the common
   * `<P>_ALLOWED_USERS`, `<P>_HOME_CHANNEL`, `<P>_REQUIRE_MENTION` and `<P>_TOOLSETS`.
   */
  readonly env: EnvTable;
  /**
   * Keys (camelCase) that make a further account (`accounts:`) another bot: its token, its webhook's
   * URL and secret. An account never inherits them from the section, and one set to the section's own
   * value is refused (two adapters on one bot, or two accounts behind one webhook). Unset: none.
   */
  readonly accountKeys?: readonly string[] | undefined;
  /**
   * Credentials (camelCase keys) a further account never inherits from the section either, though it
   * may set the same value: a password given for the section's server, mailbox or user must not go to
   * the server, mailbox or user an account names (IRC's server password and SASL login, a mailbox's
   * password). Unset: none.
   */
  readonly accountSecrets?: readonly string[] | undefined;
  /**
   * Why the platform runs one account only, as the fix for a config with `<platform>.accounts` (which
   * is then refused): "the web chat is Herald's own page; …". Unset: accounts are allowed.
   */
  readonly singleAccount?: string | undefined;
  /**
   * Whether its adapter serves what the runner holds (the web chat: its sessions, history and menu
   * through `AdapterDeps.services`): it is created with the runner, once the other platforms poll.
   * @defaultValue false
   */
  readonly withRunner?: boolean | undefined;
  /** Whether the section holds what starting it needs (the gateway starts configured platforms). */
  isConfigured(config: C): boolean;
  /** Cross-field checks at load time. @throws ConfigError naming the key and the fix. */
  validate?(config: C): void;
  /** Builds the adapter, loading the platform's SDK only now. @throws ConfigError for a bad section. */
  create(config: C, deps: AdapterDeps): Promise<PlatformAdapter>;
  /** A user id as allowlists compare it (emails lowercased, phone numbers without `+`). */
  normaliseUserId?(id: string): string;
  /** For platforms whose chat ids hold colons (Matrix room ids): where the thread starts. */
  splitChatId?: ChatIdSplitter | undefined;
  /** How replies render here, for the system prompt. */
  readonly promptHint: string;
  /** Its section of docs/configuration.md: every key of its own, and every env name above. */
  readonly reference?: ConfigReference | undefined;
  /** Its step of `herald setup`: the questions, their flags and the live check of the credentials. */
  readonly setup?: SetupQuestions | undefined;
  /**
   * `herald doctor`'s lines for the platform, asked only when it is configured. Must not throw: a failed
   * check is a line with `ok: false`.
   */
  doctor?(config: C, context: DoctorContext): DoctorLine[] | Promise<DoctorLine[]>;
}

/**
 * Declares a platform module with its section type inferred from the schema. A module of any section
 * type fits the module list: its section-taking members are methods (checked bivariantly), and the
 * config loader parses each section with the module's own schema, so a module only ever receives its own.
 */
export function definePlatform<C extends PlatformCommonConfig>(module: PlatformModule<C>): PlatformModule<C> {
  return module;
}
