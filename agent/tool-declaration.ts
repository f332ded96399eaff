/**
 * A tool's declaration apart from its implementation. The declaration (a tool folder's
 * `declaration.ts`, the one place that names the tool) holds what the tool list, the toolsets, the
 * owner and approval policies and the model's request need: name, description, zod parameters (the
 * JSON Schema the model gets is converted from them, as for any tool), toolset, flags and the progress
 * label. Its implementation is a module of the folder that the declaration imports with a dynamic
 * `import()` on the tool's first call, once per process: a process that starts loads the declarations
 * only, and a turn that calls no tool loads no tool's code.
 */
import type { z } from "zod";
import type { Tool, ToolContext, ToolOutput } from "./types.js";

/**
 * Runs one call of a declared tool with its validated arguments: what an implementation module exports
 * for it. `deps` are what the process bound the tool to (`DeclaredTool.with`); may throw (the loop
 * turns the error into the model's tool result), must honour `ctx.signal`.
 */
export type ToolRun<P extends z.ZodType = z.ZodType, D = void> = (
  args: z.infer<P>,
  ctx: ToolContext,
  deps: D,
) => Promise<ToolOutput | string>;

/** A tool as its folder declares it: a `Tool` without `execute`, and where its implementation is. */
export interface ToolDeclaration<P extends z.ZodType, D> extends Omit<Tool<P>, "execute"> {
  /**
   * Imports the implementation, as `() => import("./impl.js").then((m) => m.runTodo)`. Called on the
   * tool's first call; a failed import is tried again on the next call.
   */
  implementation(): Promise<ToolRun<P, D>>;
}

/**
 * A declared tool: a `Tool` whose `execute` loads the implementation first (with `deps` undefined: for
 * tools that need nothing but their context), and `with(deps)`, the same tool bound to what the
 * process holds (a backend, a client). Every binding shares the one loaded implementation.
 */
export interface DeclaredTool<D = void> extends Tool {
  with(deps: D): Tool;
  /** Whether the implementation module has been loaded in this process. */
  readonly loaded: boolean;
}

/** Declares a tool whose implementation loads on its first call; arguments typed from the schema. */
export function declareTool<P extends z.ZodType, D = void>(
  declaration: ToolDeclaration<P, D>,
): DeclaredTool<D> {
  const { implementation, ...tool } = declaration;
  let run: ToolRun<P, D> | undefined;
  let pending: Promise<ToolRun<P, D>> | undefined;
  const load = (): Promise<ToolRun<P, D>> =>
    (pending ??= implementation().then(
      (loaded) => (run = loaded),
      (err: unknown) => {
        pending = undefined;
        throw err;
      },
    ));
  const bind = (deps: D): Tool =>
    ({
      ...tool,
      async execute(args: z.infer<P>, ctx: ToolContext) {
        return (run ?? (await load()))(args, ctx, deps);
      },
    }) as unknown as Tool;
  const declared = bind(undefined as D) as DeclaredTool<D>;
  Object.defineProperties(declared, {
    with: { value: bind },
    loaded: { get: () => run !== undefined },
  });
  return declared;
}

/** One call of a tool with its validated arguments, as a factory of several tools makes it. */
export type ToolExecute<P extends z.ZodType = z.ZodType> = (
  args: z.infer<P>,
  ctx: ToolContext,
) => Promise<ToolOutput | string>;

/** What {@link runsFrom} gives for a factory `(deps: D) => runs by name`. */
export type RunsOf<F> = F extends (deps: infer D) => infer R
  ? (name: keyof R & string) => () => Promise<ToolRun<z.ZodType, D>>
  : never;

/**
 * The implementations of a toolset whose tools share what the process binds them to (a browser, a
 * client): `load` imports the module whose export `factory` makes the toolset's runs by tool name from
 * the deps, and each tool's declaration takes its `implementation` from the result:
 * `const runs = runsFrom(() => import("./tools.js"), "webToolRuns")`, then
 * `implementation: runs("web_extract")`. The factory runs once per `deps` object (on the first call of
 * any of its tools).
 */
export function runsFrom<M, K extends keyof M>(load: () => Promise<M>, factory: K): RunsOf<M[K]> {
  type Runs = Record<string, ToolExecute>;
  const built = new WeakMap<object, Runs>();
  const runs = (name: string) => async (): Promise<ToolRun<z.ZodType, object>> => {
    const make = (await load())[factory] as unknown as (deps: object) => Runs;
    return (args, ctx, deps) => {
      let made = built.get(deps);
      if (!made) {
        made = make(deps);
        built.set(deps, made);
      }
      return made[name]!(args, ctx);
    };
  };
  return runs as unknown as RunsOf<M[K]>;
}
