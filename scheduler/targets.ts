/**
 * Delivery targets of a job: `origin` (the chat it was created in), `local` (kept in the run history,
 * not sent), `<platform>` (that platform's home channel), `<platform>:<chat>[:<thread>]`,
 * `email:<address>`, and comma lists of these. Parsed when a job is saved, resolved when it runs.
 */
import { formatChat, parseChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef } from "../core/types.js";

const PLATFORM_NAME = /^[a-z][a-z0-9_-]*$/;
const EMAIL_ADDRESS = /^[^@\s:,]+@[^@\s:,]+$/;

const FORMS =
  "Targets: origin (this chat), local (keep, don't send), <platform> (its home channel, set with /sethome), <platform>:<chat id>[:<thread id>], email:<address>, or a comma list.";

function invalid(message: string): HeraldError {
  return new HeraldError(message, { code: "invalid_input" });
}

/** Options of `parseTargets`. */
export interface ParseTargetsOptions {
  /** Whether the job has an origin chat (jobs added on the CLI have none). */
  hasOrigin: boolean;
  /** When given, platform names outside it are refused (catches typos like "telegarm"). */
  knownPlatforms?: ReadonlySet<string> | undefined;
  /** Parses a chat string with the platforms' chat-id rules. @defaultValue `parseChat` */
  parseChat?: ((value: string) => ChatRef | undefined) | undefined;
}

/**
 * Parses a comma list of targets into their normal forms (trimmed, deduplicated, chats formatted).
 * @throws HeraldError `invalid_input` naming the bad target and the forms that work.
 */
export function parseTargets(text: string, options: ParseTargetsOptions): string[] {
  const specs = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (specs.length === 0) throw invalid(`No delivery target given. ${FORMS}`);
  const out: string[] = [];
  for (const spec of specs) {
    const normal = parseTarget(spec, options);
    if (!out.includes(normal)) out.push(normal);
  }
  return out;
}

function parseTarget(spec: string, options: ParseTargetsOptions): string {
  const lower = spec.toLowerCase();
  if (lower === "origin") {
    if (!options.hasOrigin) {
      throw invalid(
        `"origin" means the chat the job was created in, and a job added from the command line has none. ${FORMS}`,
      );
    }
    return "origin";
  }
  if (lower === "local") return "local";
  if (!spec.includes(":")) {
    if (!PLATFORM_NAME.test(lower)) throw invalid(`"${spec}" is not a delivery target. ${FORMS}`);
    checkPlatform(lower, options);
    return lower;
  }
  const chat = options.parseChat ? options.parseChat(spec) : parseChat(spec);
  if (!chat || !PLATFORM_NAME.test(chat.platform))
    throw invalid(`"${spec}" is not a delivery target. ${FORMS}`);
  if (chat.platform === "email" && !EMAIL_ADDRESS.test(chat.chatId)) {
    throw invalid(`"${chat.chatId}" is not an email address; write email:name@example.com.`);
  }
  checkPlatform(chat.platform, options);
  return formatChat(chat);
}

function checkPlatform(platform: string, options: ParseTargetsOptions): void {
  if (options.knownPlatforms && !options.knownPlatforms.has(platform)) {
    const known = [...options.knownPlatforms].sort().join(", ");
    throw invalid(`"${platform}" is not a platform Herald knows (${known}). ${FORMS}`);
  }
}

/** What resolving needs to know about the running gateway. */
export interface TargetEnvironment {
  /** The home channel of a platform (set with /sethome, or `<P>_HOME_CHANNEL`). */
  homeChannel(platform: string): ChatRef | undefined;
  /** Whether an adapter for the platform is running (can deliver now). */
  isRunning(platform: string): boolean;
  /** Parses a chat string with the platforms' chat-id rules. @defaultValue `parseChat` */
  parseChat?: ((value: string) => ChatRef | undefined) | undefined;
}

/** Targets of one run: the chats to deliver to, and the targets that can't be reached, with why. */
export interface ResolvedTargets {
  chats: { spec: string; chat: ChatRef }[];
  unreachable: { spec: string; reason: string }[];
}

/** Resolves a job's targets for one run. `local` resolves to nothing (kept in the run history only). */
export function resolveTargets(
  deliver: readonly string[],
  origin: ChatRef | undefined,
  env: TargetEnvironment,
): ResolvedTargets {
  const result: ResolvedTargets = { chats: [], unreachable: [] };
  const seen = new Set<string>();
  for (const spec of deliver) {
    if (spec === "local") continue;
    let chat: ChatRef | undefined;
    if (spec === "origin") {
      chat = origin;
      if (!chat) {
        result.unreachable.push({
          spec,
          reason: "the job has no origin chat (it was added from the command line)",
        });
        continue;
      }
    } else if (!spec.includes(":")) {
      chat = env.homeChannel(spec);
      if (!chat) {
        result.unreachable.push({
          spec,
          reason: `${spec} has no home channel: send /sethome in the ${spec} chat that should get these reports, or set ${spec.toUpperCase()}_HOME_CHANNEL`,
        });
        continue;
      }
    } else {
      chat = env.parseChat ? env.parseChat(spec) : parseChat(spec);
      if (!chat) {
        result.unreachable.push({ spec, reason: `"${spec}" is not a chat` });
        continue;
      }
    }
    if (!env.isRunning(chat.platform)) {
      result.unreachable.push({
        spec,
        reason: `${chat.platform} is not connected in this gateway (not configured, or it failed to start)`,
      });
      continue;
    }
    const key = formatChat(chat);
    if (seen.has(key)) continue;
    seen.add(key);
    result.chats.push({ spec, chat });
  }
  return result;
}
