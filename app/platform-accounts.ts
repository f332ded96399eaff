/**
 * A platform's further bot account as an adapter of its own (part of the gateway's composition root).
 * The platform's adapter is built from the account's section as for the default account and knows
 * nothing of accounts; this wrapper gives it the account's platform name (`telegram@family`) on the way
 * in, so the account's chats, sessions, outbox items, ledger entries and allowlists are its own, and
 * takes it off on the way out, so the adapter sees its own platform's chats.
 */
import type { ChatRef, InboundMessage, PlatformAdapter } from "../core/types.js";

/**
 * `adapter` answering as `name` (`telegram@family`), its chats renamed both ways. `ownText` renames
 * what its start errors say to the account's own terms (its variables) before they reach `/health`.
 */
export function accountAdapter(
  adapter: PlatformAdapter,
  name: string,
  ownText: (text: string) => string = (text) => text,
): PlatformAdapter {
  const inner = (chat: ChatRef): ChatRef => ({ ...chat, platform: adapter.platform });
  const outer = (message: InboundMessage): InboundMessage => ({
    ...message,
    platform: name,
    chat: { ...message.chat, platform: name },
  });
  const wrapped: PlatformAdapter = {
    platform: name,
    sendsButtons: adapter.sendsButtons,
    start: async (onMessage) => {
      try {
        await adapter.start((message) => onMessage(outer(message)));
      } catch (err) {
        // The platform's error names the default account's variables; the operator needs this account's.
        if (err instanceof Error) err.message = ownText(err.message);
        throw err;
      }
    },
    stop: () => adapter.stop(),
    send: (chat, message, options) => adapter.send(inner(chat), message, options),
  };
  // Optional members exist only where the adapter has them (callers check for them).
  if (adapter.edit) wrapped.edit = (chat, id, text) => adapter.edit!(inner(chat), id, text);
  if (adapter.settleButtons) {
    wrapped.settleButtons = (chat, id, text) => adapter.settleButtons!(inner(chat), id, text);
  }
  if (adapter.deleteMessage) wrapped.deleteMessage = (chat, id) => adapter.deleteMessage!(inner(chat), id);
  if (adapter.sendTyping) wrapped.sendTyping = (chat) => adapter.sendTyping!(inner(chat));
  if (adapter.onTurnEvent) wrapped.onTurnEvent = (chat, event) => adapter.onTurnEvent!(inner(chat), event);
  if (adapter.handleWebhook) wrapped.handleWebhook = (request) => adapter.handleWebhook!(request);
  if (adapter.handleHttp) wrapped.handleHttp = (req, res, path) => adapter.handleHttp!(req, res, path);
  if (adapter.status) wrapped.status = () => adapter.status!();
  return wrapped;
}
