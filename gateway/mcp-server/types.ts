/**
 * What Herald's MCP server serves, as one port the gateway implements over its own state: sessions
 * (list, search, read), a message to a chat through the outbox, and cron jobs (list, add). The
 * server (`server.ts`) only maps MCP tools onto it.
 */
import type { CronJobView } from "../../scheduler/types.js";
import type { SearchHit, Session, StoredMessage } from "../../sessions/types.js";

/** Herald as the MCP tools see it. Methods reject with a `HeraldError` whose message says the fix. */
export interface HeraldMcpPort {
  listSessions(options: { limit: number; activeOnly: boolean }): Session[];
  searchSessions(query: string, options: { limit: number }): SearchHit[];
  /** A session and its messages (the last `limit`), or undefined for an unknown id. */
  readSession(
    id: string,
    options: { limit: number },
  ): { session: Session; messages: StoredMessage[] } | undefined;
  /**
   * Queues `text` for `chat` (`platform:chatId[:threadId]`) in the durable outbox: delivered once.
   * With an `idempotencyKey` seen before, nothing is queued again (`duplicate: true`).
   */
  sendMessage(chat: string, text: string, idempotencyKey?: string): { duplicate: boolean };
  listCronJobs(): CronJobView[];
  addCronJob(input: {
    schedule: string;
    prompt: string;
    deliver: string;
    name?: string | undefined;
  }): Promise<CronJobView>;
}
