/**
 * The browser tools that act on a page: `browser_click`, `browser_type`, `browser_select`,
 * `browser_press`. Each answers with the page's snapshot after what the action set off.
 *
 * Approval (`browser.approve: [submit]`, with `exec.dangerous_commands: manual`): an action that sends
 * a form by POST (a click on its submit button, typing with `submit`, Enter in one of its fields) waits
 * for the user's `/approve`; in `deny` mode it is refused; with `off` it runs. A search form (GET) never
 * waits: it only reads. The approval is for exactly that form on that page, from that element.
 */
import type { ElementHandle } from "puppeteer-core";
import { HeraldError } from "../../../core/errors.js";
import type { ToolExecute } from "../../tool-declaration.js";
import type { ToolContext, ToolOutput } from "../../types.js";
import { gateAction } from "./approval.js";
import { type BrowserToolsDeps, report, sessionOf, settle } from "./common.js";
import type {
  browserClickParameters,
  browserPressParameters,
  browserSelectParameters,
  browserTypeParameters,
} from "./declaration.js";
import type { BrowserSession } from "./pool.js";
import { elementOf } from "./snapshot.js";

/** The element a ref of the session's latest snapshot names. */
async function element(
  session: BrowserSession,
  ref: string,
): Promise<{ handle: ElementHandle<Element>; label: string }> {
  const target = session.refs.get(ref);
  if (!target)
    throw new HeraldError(
      `${ref} is not in the latest snapshot of this tab; take a new snapshot and use its refs`,
      {
        code: "invalid_input",
      },
    );
  const handle = await elementOf(target);
  if (!handle)
    throw new HeraldError(
      `${ref} (${target.role} "${target.name}") is no longer on the page; take a new snapshot`,
      {
        code: "invalid_input",
      },
    );
  return { handle, label: `${target.role}${target.name ? ` "${target.name}"` : ""}` };
}

/**
 * Where the action would send a form by POST: the form's action URL, or undefined. `how` is `click`
 * (the element is a submit control) or `enter` (the element is a field of the form).
 */
function postFormOf(handle: ElementHandle<Element>, how: "click" | "enter"): Promise<string | undefined> {
  return handle.evaluate((el, mode) => {
    const control = el as HTMLButtonElement | HTMLInputElement;
    const form = (control.form ?? el.closest("form")) as HTMLFormElement | null;
    if (!form) return undefined;
    if (mode === "click") {
      const tag = el.tagName.toLowerCase();
      const type = (el.getAttribute("type") ?? (tag === "button" ? "submit" : "")).toLowerCase();
      const submits =
        (tag === "button" && type === "submit") ||
        (tag === "input" && (type === "submit" || type === "image"));
      if (!submits) return undefined;
    }
    const method = ((control as HTMLButtonElement).formMethod || form.method || "get").toLowerCase();
    return method === "post" ? form.action || location.href : undefined;
  }, how);
}

/** Held or refused when the action submits a POST form and `submit` needs approval; else undefined. */
async function gateSubmit(
  deps: BrowserToolsDeps,
  ctx: ToolContext,
  session: BrowserSession,
  handle: ElementHandle<Element>,
  how: "click" | "enter",
  label: string,
): Promise<ToolOutput | undefined> {
  if (!deps.approve.includes("submit") || deps.approvalMode === "off") return undefined;
  const action = await postFormOf(handle, how);
  if (!action) return undefined;
  return gateAction(deps.approvalMode, ctx, {
    command: `submit the form to ${action} on ${session.page.url()} (${label})`,
    ruleId: "browser-submit",
    ruleDescription: "sending a form on a web page (browser.approve: submit)",
  });
}

/** What the acting browser tools do (`declaration.ts` declares them), bound to `deps`, by name. */
export function actTools(deps: BrowserToolsDeps) {
  const click: ToolExecute<typeof browserClickParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const { handle, label } = await element(session, args.ref);
    const held = await gateSubmit(deps, ctx, session, handle, "click", label);
    if (held) return held;
    await settle(session.page, () => handle.click(), ctx.signal);
    return report(session);
  };

  const type: ToolExecute<typeof browserTypeParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const { handle, label } = await element(session, args.ref);
    if (args.submit) {
      const held = await gateSubmit(deps, ctx, session, handle, "enter", label);
      if (held) return held;
    }
    await handle.evaluate((el) => {
      if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) el.value = "";
      else if ((el as HTMLElement).isContentEditable) el.textContent = "";
    });
    await handle.type(args.text);
    if (args.submit) await settle(session.page, () => handle.press("Enter"), ctx.signal);
    return report(session);
  };

  const select: ToolExecute<typeof browserSelectParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    const { handle } = await element(session, args.ref);
    const chosen = await handle.evaluate((el, wanted) => {
      const box = el instanceof HTMLSelectElement ? el : el.closest("select");
      if (!box) return undefined;
      const option = [...box.options].find((o) => o.value === wanted || o.label.trim() === wanted);
      if (!option) return null;
      box.value = option.value;
      box.dispatchEvent(new Event("input", { bubbles: true }));
      box.dispatchEvent(new Event("change", { bubbles: true }));
      return option.label;
    }, args.value);
    if (chosen === undefined) return { content: `error: ${args.ref} is not a select element`, isError: true };
    if (chosen === null)
      return { content: `error: ${args.ref} has no option "${args.value}"`, isError: true };
    return report(session, { note: `selected "${chosen}"` });
  };

  const press: ToolExecute<typeof browserPressParameters> = async (args, ctx) => {
    const session = await sessionOf(deps, ctx);
    if (args.key === "Enter") {
      const active = await session.page.evaluateHandle(() => document.activeElement);
      const focused = active.asElement() as ElementHandle<Element> | null;
      const held =
        focused && (await gateSubmit(deps, ctx, session, focused, "enter", "Enter in the focused field"));
      if (held) return held;
    }
    // biome-ignore lint/suspicious/noExplicitAny: puppeteer checks the key name itself and throws for an unknown one.
    await settle(session.page, () => session.page.keyboard.press(args.key as any), ctx.signal);
    return report(session);
  };

  return { browser_click: click, browser_type: type, browser_select: select, browser_press: press };
}
