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

  it("owners: GATEWAY_OWNERS entries, API and terminal callers; allowed users and paired ones are not", () => {
    const { state, access } = policy({
      TELEGRAM_ALLOWED_USERS: "111,222",
      GATEWAY_OWNERS: "telegram:222,matrix:@boss:example.org",
    });
    expect(access.isOwner("telegram", "222")).toBe(true);
    expect(access.isOwner("telegram", "111")).toBe(false);
    expect(access.isOwner("discord", "222")).toBe(false);
    expect(access.isOwner("matrix", "@boss:example.org")).toBe(true);
    expect(access.isOwner("api", "anyone")).toBe(true);
    expect(access.isOwner("cli", "me")).toBe(true);
    expect(access.isOwner("cron", "job")).toBe(false);
    state.pairing.allow("telegram", "333");
    expect(access.isOwner("telegram", "333")).toBe(false);
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
