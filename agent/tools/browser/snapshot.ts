/**
 * A page as the model reads it: Chromium's accessibility tree (the interesting nodes, as screen readers
 * get them) in compact indented text, each element the model can act on with a short ref
 * (`[e12] button "Sign in"`), plain text as `text:` lines. Refs are unique in the process (a counter),
 * so a progress line can name the element a ref points at; an element keeps its ref from one snapshot
 * to the next (the model may type into two fields of one snapshot); the tools accept only the refs of
 * the session's latest snapshot of that tab.
 */
import type { ElementHandle, Page, SerializedAXNode } from "puppeteer-core";

/** Roles the model acts on; each gets a ref. */
const INTERACTIVE = new Set([
  "button",
  "link",
  "textbox",
  "searchbox",
  "checkbox",
  "radio",
  "combobox",
  "listbox",
  "option",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "switch",
  "slider",
  "spinbutton",
  "treeitem",
]);

/** Roles that only group: their children are shown in their place when they have no name. */
const TRANSPARENT = new Set(["generic", "none", "presentation", "LineBreak", "paragraph", "Section"]);

/** An element a ref names. */
export interface RefTarget {
  role: string;
  name: string;
  node: SerializedAXNode;
}

/** A snapshot: its text lines, the refs it handed out, and each element's ref by its node's id. */
export interface Snapshot {
  lines: string[];
  refs: Map<string, RefTarget>;
  ids: Map<string, string>;
}

/** A node's id in its document (Chromium's backend node id and the document's loader). */
function idOf(node: SerializedAXNode): string | undefined {
  const { backendNodeId, loaderId } = node as { backendNodeId?: number; loaderId?: string };
  return backendNodeId === undefined ? undefined : `${loaderId ?? ""}:${backendNodeId}`;
}

let counter = 0;
/** Names of recent refs for progress lines (process-wide; bounded). */
const names = new Map<string, string>();

/** The role and name a ref of any session pointed at, for a progress line; undefined when unknown. */
export function describeRef(ref: string): string | undefined {
  return names.get(ref);
}

function remember(ref: string, text: string): void {
  names.set(ref, text);
  if (names.size > 2000) {
    const oldest = names.keys().next().value;
    if (oldest !== undefined) names.delete(oldest);
  }
}

function quote(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

function props(node: SerializedAXNode): string {
  const out: string[] = [];
  if (node.value !== undefined && node.value !== "") out.push(`value=${quote(String(node.value), 100)}`);
  if (node.checked !== undefined) out.push(`checked=${String(node.checked)}`);
  if (node.selected) out.push("selected");
  if (node.disabled) out.push("disabled");
  if (node.expanded !== undefined) out.push(`expanded=${String(node.expanded)}`);
  if (node.level !== undefined) out.push(`level=${node.level}`);
  if (node.required) out.push("required");
  return out.length ? ` ${out.join(" ")}` : "";
}

/**
 * Builds the snapshot of a tree: an element of `known` (the previous snapshot's `ids`) keeps its ref,
 * new ones count on from the process's counter.
 */
export function formatTree(
  root: SerializedAXNode | null,
  known: ReadonlyMap<string, string> = new Map(),
): Snapshot {
  const lines: string[] = [];
  const refs = new Map<string, RefTarget>();
  const ids = new Map<string, string>();
  const walk = (node: SerializedAXNode, depth: number) => {
    const role = node.role;
    const name = (node.name ?? "").trim();
    const pad = "  ".repeat(depth);
    if (role === "StaticText" || role === "text") {
      if (name) {
        const last = lines.at(-1);
        // Adjacent text pieces read as one line.
        if (last?.startsWith(`${pad}text: `) && last.length < 400)
          lines[lines.length - 1] = `${last} ${name}`;
        else lines.push(`${pad}text: ${name}`);
      }
      return;
    }
    if (role === "RootWebArea" || (TRANSPARENT.has(role) && !name)) {
      for (const child of node.children ?? []) walk(child, depth);
      return;
    }
    let ref = "";
    if (INTERACTIVE.has(role)) {
      const id = idOf(node);
      ref = (id && known.get(id)) || `e${++counter}`;
      if (id) ids.set(id, ref);
      refs.set(ref, { role, name, node });
      remember(ref, `${role}${name ? ` ${quote(name, 60)}` : ""}`);
    }
    const head = `${pad}${ref ? `[${ref}] ` : ""}${role}${name ? ` ${quote(name)}` : ""}${props(node)}`;
    lines.push(head);
    // A link's or button's text is its name already.
    if (ref && (node.children ?? []).every((c) => c.role === "StaticText")) return;
    for (const child of node.children ?? []) walk(child, depth + 1);
  };
  if (root) walk(root, 0);
  return { lines, refs, ids };
}

/** The page's snapshot; elements of `known` keep their refs. */
export async function takeSnapshot(page: Page, known?: ReadonlyMap<string, string>): Promise<Snapshot> {
  const root = await page.accessibility.snapshot({ interestingOnly: true });
  return formatTree(root, known);
}

/** One page of a snapshot's text, at most `maxChars`, and whether more follows. */
export function pageOf(
  lines: readonly string[],
  pageNumber: number,
  maxChars: number,
): { text: string; pages: number } {
  const pages: string[][] = [[]];
  let size = 0;
  for (const line of lines) {
    const current = pages.at(-1) ?? [];
    if (size + line.length + 1 > maxChars && current.length > 0) {
      pages.push([line]);
      size = line.length + 1;
    } else {
      current.push(line);
      size += line.length + 1;
    }
  }
  const chosen = pages[Math.min(Math.max(pageNumber, 1), pages.length) - 1] ?? [];
  return { text: chosen.join("\n"), pages: pages.length };
}

/** The element behind a ref, or undefined when it left the page. */
export async function elementOf(target: RefTarget): Promise<ElementHandle<Element> | undefined> {
  return (await target.node.elementHandle()) ?? undefined;
}
