/**
 * The input items of a Responses request as `GET /v1/responses/{id}/input_items` lists them: a string
 * input is one user message item, each given item is kept as sent (a message's string content as one
 * `input_text` part), and every item gets an id when it came without one. Listed as OpenAI lists
 * them: newest first unless `order=asc`, a page of `limit` (1–100, default 20) after the item `after`.
 */
import type { ResponsesRequest } from "./responses-parse.js";

/** The request's input as stored items, with ids made from `itemPrefix` (the response's own). */
export function inputItemsOf(input: ResponsesRequest["input"], itemPrefix: string): unknown[] {
  const given = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : input;
  return given.map((raw, i) => {
    const item = raw as Record<string, unknown>;
    const isMessage = item["type"] === "message" || (item["type"] === undefined && "role" in item);
    const content = item["content"];
    return {
      ...item,
      id: typeof item["id"] === "string" ? item["id"] : `${itemPrefix}_in${i}`,
      ...(isMessage
        ? {
            type: "message",
            status: "completed",
            content: typeof content === "string" ? [{ type: "input_text", text: content }] : content,
          }
        : {}),
    };
  });
}

/** One page of `items` as the list endpoint answers it, or the problem with the query. */
export function inputItemsPage(
  items: readonly unknown[],
  query: URLSearchParams,
): { page: object } | { problem: string; param: string } {
  const order = query.get("order") ?? "desc";
  if (order !== "asc" && order !== "desc")
    return { problem: `'order' must be 'asc' or 'desc' (got '${order}').`, param: "order" };
  const limit = Number(query.get("limit") ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    return { problem: "'limit' must be an integer from 1 to 100.", param: "limit" };
  const ordered = order === "asc" ? [...items] : [...items].reverse();
  const idOf = (item: unknown) => (item as { id: string }).id;
  const after = query.get("after");
  const start = after ? ordered.findIndex((item) => idOf(item) === after) + 1 : 0;
  if (after && start === 0) return { problem: `No input item with id '${after}'.`, param: "after" };
  const data = ordered.slice(start, start + limit);
  return {
    page: {
      object: "list",
      data,
      first_id: data.length ? idOf(data[0]) : null,
      last_id: data.length ? idOf(data.at(-1)) : null,
      has_more: start + limit < ordered.length,
    },
  };
}
