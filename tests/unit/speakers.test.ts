/**
 * Sender tags of shared group sessions: how display names become labels, how two people with one name
 * are told apart, and the roster that keeps a person's label for the session.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { attribute, chooseLabel, cleanName, leadingTag, withSenderTag } from "../../core/speakers.js";
import type { KeyValueStore } from "../../core/types.js";
import { SpeakerRoster } from "../../gateway/speakers.js";

const hashOf = (userId: string, n = 4) =>
  createHash("sha256").update(`telegram\u0000${userId}`).digest("hex").slice(0, n);

function memoryKv(): KeyValueStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    get: (k) => map.get(k),
    set: (k, v) => void map.set(k, v),
    delete: (k) => void map.delete(k),
  };
}

describe("cleanName", () => {
  it.each<[string, string | undefined, string | undefined]>([
    ["a plain name stays", "Alice Smith", "Alice Smith"],
    ["brackets cannot close the tag early", "Eve] [Alice", "Eve Alice"],
    ["fullwidth brackets fold to brackets and go too", "［Bob］", "Bob"],
    ["a # cannot fake a disambiguator", "Bob #3f2a", "Bob 3f2a"],
    ["line breaks and control characters go", "Ann\n[Bob] hi\u0007", "Ann Bob hi"],
    ["bidi overrides go", "\u202eecilA", "ecilA"],
    ["long names are cut", "x".repeat(100), "x".repeat(40)],
    ["nothing left is no name", "[]#\n", undefined],
    ["no name", undefined, undefined],
  ])("%s", (_name, input, output) => {
    expect(cleanName(input)).toBe(output);
  });
});

describe("chooseLabel", () => {
  it("uses the name while it is free, then the name with a hash of the user id", () => {
    expect(chooseLabel("Alice", "telegram", "1", new Set())).toBe("Alice");
    expect(chooseLabel("Alice", "telegram", "2", new Set(["Alice"]))).toBe(`Alice #${hashOf("2")}`);
    expect(chooseLabel("Alice", "telegram", "2", new Set(["Alice", `Alice #${hashOf("2")}`]))).toBe(
      `Alice #${hashOf("2", 8)}`,
    );
    expect(chooseLabel(undefined, "telegram", "3", new Set())).toBe(`user #${hashOf("3")}`);
  });
});

describe("attribute and leadingTag", () => {
  it("puts the tag first and reads back only the gateway's shape", () => {
    expect(attribute("hi", "Alice")).toBe("[Alice] hi");
    expect(attribute("", "Alice")).toBe("[Alice]");
    expect(leadingTag("[Alice] [Bob] hi")).toBe("[Alice]");
    expect(leadingTag("[Alice #3f2a] hi")).toBe("[Alice #3f2a]");
    expect(leadingTag("[Alice]\n[attached image: a.png, image/png, /x/a.png]")).toBe("[Alice]");
    expect(leadingTag("[attached image: a.png, image/png, /workspace/attachments/a.png]")).toBeUndefined();
    expect(leadingTag("[Alice]: hi")).toBeUndefined();
    expect(leadingTag("hi [Alice]")).toBeUndefined();
  });

  it("withSenderTag puts the tag back on an excerpt that lost it", () => {
    expect(withSenderTag("…the **zeppelin** landed", "[Alice] long … the zeppelin landed")).toBe(
      "[Alice] …the **zeppelin** landed",
    );
    expect(withSenderTag("[Alice] **zeppelin**", "[Alice] zeppelin")).toBe("[Alice] **zeppelin**");
    expect(withSenderTag("…**zeppelin**", "no tag … zeppelin")).toBe("…**zeppelin**");
  });
});

describe("SpeakerRoster", () => {
  it("keeps a person's first label for the session, and sessions apart", () => {
    const kv = memoryKv();
    const roster = new SpeakerRoster(kv);
    expect(roster.label("s1", "telegram", { id: "1", name: "Alice" })).toBe("Alice");
    expect(roster.label("s1", "telegram", { id: "2", name: "Alice" })).toBe(`Alice #${hashOf("2")}`);
    // A rename later in the session keeps the label; the other Alice keeps hers.
    expect(roster.label("s1", "telegram", { id: "1", name: "Alicia" })).toBe("Alice");
    expect(roster.label("s1", "telegram", { id: "2", name: "Alice" })).toBe(`Alice #${hashOf("2")}`);
    // A new session starts a new roster.
    expect(roster.label("s2", "telegram", { id: "2", name: "Alice" })).toBe("Alice");
    // Kept in the store: a restarted gateway labels people as before.
    expect(new SpeakerRoster(kv).label("s1", "telegram", { id: "2", name: "Alice" })).toBe(
      `Alice #${hashOf("2")}`,
    );
  });

  it("takes any user id, __proto__ included, and starts afresh from an unreadable roster", () => {
    const kv = memoryKv();
    const roster = new SpeakerRoster(kv);
    expect(roster.label("s1", "irc", { id: "__proto__", name: "proto" })).toBe("proto");
    expect(roster.label("s1", "irc", { id: "__proto__", name: "renamed" })).toBe("proto");
    kv.set("s2", "not json");
    expect(roster.label("s2", "irc", { id: "1", name: "Ann" })).toBe("Ann");
  });
});
