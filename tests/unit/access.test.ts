import { describe, expect, it } from "vitest";
import { loadConfig } from "../../app/config.js";
import { userIdNormalisers } from "../../app/platforms.js";
import { AccessPolicy } from "../../gateway/access.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

function policy(env: Record<string, string>) {
  const state = SqliteState.open(":memory:");
  return {
    state,
    access: new AccessPolicy(
      loadConfig({ env: { HERALD_HOME: "/nonexistent-herald", ...env } }),
      state.pairing,
      userIdNormalisers,
    ),
  };
}

describe("AccessPolicy", () => {
  it("denies by default and admits by platform list, global list and pairing", () => {
    const { state, access } = policy({
      TELEGRAM_ALLOWED_USERS: "111",
      GATEWAY_ALLOWED_USERS: "discord:222,333",
    });
    expect(access.isAllowed("telegram", "111")).toBe(true);
    expect(access.isAllowed("telegram", "222")).toBe(false);
    expect(access.isAllowed("discord", "222")).toBe(true);
    expect(access.isAllowed("slack", "333")).toBe(true);
    expect(access.isAllowed("slack", "444")).toBe(false);
    state.pairing.allow("slack", "444");
    expect(access.isAllowed("slack", "444")).toBe(true);
    state.close();
  });

  it("owners: the users config names (GATEWAY_OWNERS narrows them), API, terminal and MCP callers; paired and allow-all users are not", () => {
    const named = policy({ TELEGRAM_ALLOWED_USERS: "111", GATEWAY_ALLOWED_USERS: "discord:222" });
    expect(named.access.isOwner("telegram", "111")).toBe(true);
    expect(named.access.isOwner("discord", "222")).toBe(true);
    named.state.pairing.allow("telegram", "333");
    expect(named.access.isAllowed("telegram", "333")).toBe(true);
    expect(named.access.isOwner("telegram", "333")).toBe(false);
    named.state.close();

    const { state, access } = policy({
      TELEGRAM_ALLOWED_USERS: "111,222",
      GATEWAY_OWNERS: "telegram:222,matrix:@boss:example.org",
    });
    expect(access.isOwner("telegram", "222")).toBe(true);
    expect(access.isOwner("telegram", "111")).toBe(false);
    expect(access.isOwner("discord", "222")).toBe(false);
    expect(access.isOwner("matrix", "@boss:example.org")).toBe(true);
    // An owner named only in GATEWAY_OWNERS is admitted too.
    expect(access.isAllowed("matrix", "@boss:example.org")).toBe(true);
    expect(access.isOwner("api", "anyone")).toBe(true);
    expect(access.isOwner("cli", "me")).toBe(true);
    expect(access.isOwner("mcp", "mcp")).toBe(true);
    expect(access.isOwner("cron", "job")).toBe(false);
    expect(access.isOwner("webhook", "webhook:ci")).toBe(false);
    state.close();

    const open = policy({ GATEWAY_ALLOW_ALL_USERS: "true", GATEWAY_ALLOWED_USERS: "webhook:ci" });
    expect(open.access.isAllowed("telegram", "999")).toBe(true);
    expect(open.access.isOwner("telegram", "999")).toBe(false);
    expect(
      open.access.callerIsOwner({ chat: { platform: "webhook", chatId: "ci" }, userId: "webhook:ci" }),
    ).toBe(false);
    open.state.close();
  });

  it("delivery: owners anywhere; others to their own chat; a cron run as its job's maker; a webhook turn as nobody", () => {
    const { state, access } = policy({ TELEGRAM_ALLOWED_USERS: "111", GATEWAY_ALLOW_ALL_USERS: "true" });
    const tg = (chatId: string) => ({ platform: "telegram", chatId });
    const owner = { chat: tg("111"), userId: "111" };
    const other = { chat: tg("333"), userId: "333" };
    expect(access.mayDeliver(owner, tg("999"))).toBe(true);
    expect(access.mayDeliver(owner, undefined)).toBe(true);
    expect(access.mayDeliver(other, tg("333"))).toBe(true);
    expect(access.mayDeliver(other, { ...tg("333"), threadId: "7" })).toBe(false);
    expect(access.mayDeliver(other, tg("999"))).toBe(false);
    expect(access.mayDeliver(other, undefined)).toBe(false);
    expect(() => access.checkDelivery(other, "telegram", undefined)).toThrow(
      /only the owner may send to another chat \(telegram, a home channel\)/,
    );
    expect(() => access.checkDelivery(other, "telegram:999", tg("999"))).toThrow(
      expect.objectContaining({ code: "unauthorized" }),
    );

    // Cron runs: nobody until the cron service says who made each job.
    const run = (jobId: string) => ({
      chat: { platform: "cron", chatId: jobId, threadId: "r1" },
      userId: "x",
    });
    expect(access.principalOf(run("j1"))).toBe("nobody");
    access.resolvePrincipals("cron", (chat) =>
      chat.chatId === "j-owner" ? owner : chat.chatId === "j-cli" ? "owner" : other,
    );
    expect(access.mayDeliver(run("j-owner"), tg("999"))).toBe(true);
    expect(access.mayDeliver(run("j-cli"), tg("999"))).toBe(true);
    expect(access.mayDeliver(run("j-other"), tg("999"))).toBe(false);
    expect(access.mayDeliver(run("j-other"), tg("333"))).toBe(true);

    const webhook = { chat: { platform: "webhook", chatId: "ci", threadId: "w1" }, userId: "webhook:ci" };
    expect(access.principalOf(webhook)).toBe("nobody");
    expect(access.mayDeliver(webhook, tg("111"))).toBe(false);
    expect(access.mayDeliver({ chat: { platform: "mcp", chatId: "owner" }, userId: "mcp" }, tg("999"))).toBe(
      true,
    );
    state.close();
  });

  it("matches Matrix ids with colons, bare or platform-scoped", () => {
    const { state, access } = policy({ GATEWAY_ALLOWED_USERS: "@alice:example.org,matrix:@bob:example.org" });
    expect(access.isAllowed("matrix", "@alice:example.org")).toBe(true);
    expect(access.isAllowed("matrix", "@bob:example.org")).toBe(true);
    expect(access.isAllowed("matrix", "@eve:example.org")).toBe(false);
    state.close();
  });

  it("normalises email case and WhatsApp number spellings", () => {
    const { state, access } = policy({
      EMAIL_ALLOWED_USERS: "Alice@Example.org",
      WHATSAPP_ALLOWED_USERS: "+15550001111",
    });
    expect(access.isAllowed("email", "alice@example.org")).toBe(true);
    expect(access.isAllowed("whatsapp", "15550001111@s.whatsapp.net")).toBe(true);
    state.close();
  });
});
