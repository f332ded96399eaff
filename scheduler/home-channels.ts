/**
 * Home channels: per platform, the chat that a job delivering to `<platform>` reports to (and
 * `send_message` to `<platform>`, webhooks, provider key alerts). `/sethome` in a chat makes it the
 * home channel of its platform; `<P>_HOME_CHANNEL` is the default until then. Only owners may run it:
 * the home channel is where the owner's reports go, and no one else may reroute them.
 */

import { formatChat, parseChat } from "../core/chat.js";
import type { CommandModule } from "../core/commands.js";
import type { ChatRef, KeyValueStore } from "../core/types.js";

/** The kv namespace holding `platform → chat string`. */
export const HOME_CHANNELS_NAMESPACE = "home-channels";

/** Home channels over a kv namespace, with configured defaults. */
export class HomeChannels {
  constructor(
    private readonly kv: KeyValueStore,
    /** The configured default of a platform (`<P>_HOME_CHANNEL`): a chat id, or a whole chat string. */
    private readonly defaults: (platform: string) => string | undefined = () => undefined,
    /** Parses a chat string with the platforms' chat-id rules. */
    private readonly parse: (value: string) => ChatRef | undefined = (value) => parseChat(value),
  ) {}

  /** The home channel of `platform`: the one set with /sethome, else the configured one. */
  get(platform: string): ChatRef | undefined {
    const stored = this.kv.get(platform);
    if (stored) return this.parse(stored);
    const configured = this.defaults(platform)?.trim();
    if (!configured) return undefined;
    return this.parse(configured.startsWith(`${platform}:`) ? configured : `${platform}:${configured}`);
  }

  /** Makes `chat` its platform's home channel. */
  set(chat: ChatRef): void {
    this.kv.set(chat.platform, formatChat(chat));
  }
}

/** `/sethome` (owner only): the chat it is sent in becomes its platform's home channel. */
export function setHomeCommand(homes: HomeChannels): CommandModule {
  return {
    commands: {
      sethome: {
        description: "make this chat the home channel for scheduled reports",
        access: "owner",
        run: ({ message }) => {
          homes.set(message.chat);
          const p = message.platform;
          return `🏠 This chat is now the ${p} home channel: scheduled jobs that deliver to "${p}" report here.`;
        },
      },
    },
  };
}
