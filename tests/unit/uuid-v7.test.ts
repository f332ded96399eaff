/** Herald's UUIDv7: valid version-7 UUIDs (as the `uuid` package reads them), increasing in this process. */
import { validate, version } from "uuid";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../core/uuid-v7.js";

describe("uuidv7", () => {
  it("makes valid version-7 UUIDs whose order is their creation order, within one millisecond too", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids.slice(0, 50)) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("starts with the current time in milliseconds", () => {
    const before = Date.now();
    const id = uuidv7();
    const ms = Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });
});
