import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, lazyChild } from "../../core/logger.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination }) };
}

describe("logger", () => {
  it("never writes secrets at the top level, one level down, or in request headers", () => {
    const { lines, logger } = capture();
    logger.info(
      { token: "123:AAsecret", config: { apiKey: "sk-abcdef" }, headers: { authorization: "Bearer x1" } },
      "m",
    );
    logger
      .child({ turnId: "t1" })
      .warn({ password: "hunter2", req: { headers: { authorization: "Bearer y2" } } }, "n");
    const out = lines.join("");
    for (const secret of ["123:AAsecret", "sk-abcdef", "Bearer x1", "hunter2", "Bearer y2"])
      expect(out).not.toContain(secret);
    expect(out).toContain("[redacted]");
    expect(out).toContain('"turnId":"t1"');
  });
});

describe("lazyChild", () => {
  it("logs with the bindings at enabled levels and builds no child for disabled ones", () => {
    const { lines, logger } = capture();
    let children = 0;
    const counting = new Proxy(logger, {
      get(target, prop) {
        if (prop === "child") {
          return (b: Record<string, unknown>) => {
            children++;
            return target.child(b);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const quiet = lazyChild(counting, { turnId: "t9" });
    quiet.debug({ a: 1 }, "hidden");
    expect(children).toBe(0);
    quiet.info({ b: 2 }, "shown");
    expect(children).toBe(1);
    expect(lines.join("")).toContain('"turnId":"t9"');
    expect(lines.join("")).not.toContain("hidden");
  });
});
