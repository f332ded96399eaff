/**
 * `declareTool` and `runsFrom`: a declared tool is a whole `Tool` (its schema converted as any tool's)
 * whose implementation is imported on the first call, once; bindings share it; a failed import is
 * tried again; a toolset's factory runs once per deps object.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { declareTool, runsFrom, type ToolRun } from "../../agent/tool-declaration.js";
import { defineTool, toOpenAITools } from "../../agent/tool-registry.js";
import type { ToolContext } from "../../agent/types.js";

const ctx = {} as ToolContext;
const parameters = z.object({ text: z.string().min(1).describe("What to say.") });

describe("declareTool", () => {
  it("offers the same schema as a tool defined with its implementation", () => {
    const declared = declareTool({
      name: "say",
      description: "Say it.",
      parameters,
      toolset: "core",
      implementation: async () => async () => "said",
    });
    const defined = defineTool({
      name: "say",
      description: "Say it.",
      parameters,
      toolset: "core",
      execute: async () => "said",
    });
    expect(JSON.stringify(toOpenAITools([declared]))).toBe(JSON.stringify(toOpenAITools([defined])));
  });

  it("imports the implementation on the first call only, shared by every binding", async () => {
    let imports = 0;
    const run: ToolRun<typeof parameters, string | undefined> = async ({ text }, _ctx, deps) =>
      `${deps ?? "plain"}: ${text}`;
    const tool = declareTool<typeof parameters, string | undefined>({
      name: "say",
      description: "Say it.",
      parameters,
      toolset: "core",
      implementation: async () => {
        imports++;
        return run;
      },
    });
    const loud = tool.with("loud");
    expect(imports).toBe(0);
    expect(tool.loaded).toBe(false);
    expect(await tool.execute({ text: "hi" }, ctx)).toBe("plain: hi");
    expect(await loud.execute({ text: "hi" }, ctx)).toBe("loud: hi");
    expect(await tool.execute({ text: "again" }, ctx)).toBe("plain: again");
    expect(imports).toBe(1);
    expect(tool.loaded).toBe(true);
  });

  it("tries a failed import again on the next call", async () => {
    let attempts = 0;
    const tool = declareTool({
      name: "flaky",
      description: "Fails once.",
      parameters,
      toolset: "core",
      implementation: async () => {
        if (++attempts === 1) throw new Error("cannot load");
        return async () => "loaded";
      },
    });
    await expect(tool.execute({ text: "x" }, ctx)).rejects.toThrow("cannot load");
    expect(await tool.execute({ text: "x" }, ctx)).toBe("loaded");
  });
});

describe("runsFrom", () => {
  it("runs a toolset's factory once per deps object, on the first call of any of its tools", async () => {
    const made: string[] = [];
    const module = {
      make: (deps: { name: string }) => {
        made.push(deps.name);
        return { a: async () => `a of ${deps.name}`, b: async () => `b of ${deps.name}` };
      },
    };
    const runs = runsFrom(async () => module, "make");
    const a = declareTool<typeof parameters, { name: string }>({
      name: "a",
      description: "A.",
      parameters,
      toolset: "t",
      implementation: runs("a"),
    });
    const b = declareTool<typeof parameters, { name: string }>({
      name: "b",
      description: "B.",
      parameters,
      toolset: "t",
      implementation: runs("b"),
    });
    const one = { name: "one" };
    const two = { name: "two" };
    expect(made).toEqual([]);
    expect(await a.with(one).execute({ text: "x" }, ctx)).toBe("a of one");
    expect(await b.with(one).execute({ text: "x" }, ctx)).toBe("b of one");
    expect(await b.with(two).execute({ text: "x" }, ctx)).toBe("b of two");
    expect(made).toEqual(["one", "two"]);
  });
});
