/**
 * Turndown rules that write simple HTML tables as Markdown pipe tables (turndown alone flattens cells
 * into one paragraph each). The first row is the header row. Tables that hold another table are layout,
 * not data: they keep turndown's default handling. Written against plain `childNodes`/`parentNode`
 * walks: turndown's DOM on Node (domino) answers selectors in ways that differ from browsers.
 */
import type TurndownService from "turndown";

function tableOf(node: Node): Node | null {
  let current = node.parentNode;
  while (current && current.nodeName !== "TABLE") current = current.parentNode;
  return current;
}

function containsTable(node: Node): boolean {
  for (const child of Array.from(node.childNodes))
    if (child.nodeName === "TABLE" || containsTable(child)) return true;
  return false;
}

/** True for a node inside (or being) a table with no table inside it. */
function inDataTable(node: Node): boolean {
  const table = node.nodeName === "TABLE" ? node : tableOf(node);
  return table !== null && !containsTable(table);
}

/** The first `<tr>` of a table in document order, through THEAD/TBODY/TFOOT. */
function firstRow(table: Node): Node | undefined {
  for (const child of Array.from(table.childNodes)) {
    if (child.nodeName === "TR") return child;
    if (["THEAD", "TBODY", "TFOOT"].includes(child.nodeName)) {
      const row = Array.from(child.childNodes).find((n) => n.nodeName === "TR");
      if (row) return row;
    }
  }
  return undefined;
}

function elementIndex(node: Node): number {
  const siblings = Array.from(node.parentNode?.childNodes ?? []).filter((n) => n.nodeType === 1);
  return siblings.indexOf(node as ChildNode);
}

/** Adds the table rules to `service`. */
export function addTableRules(service: TurndownService): void {
  service.addRule("tableCell", {
    filter: (node) => (node.nodeName === "TD" || node.nodeName === "TH") && inDataTable(node),
    replacement: (content, node) => {
      const text = content
        .replace(/\s*\n+\s*/g, " ")
        .replace(/\|/g, "\\|")
        .trim();
      return `${elementIndex(node) === 0 ? "| " : " "}${text} |`;
    },
  });
  service.addRule("tableRow", {
    filter: (node) => node.nodeName === "TR" && inDataTable(node),
    replacement: (content, node) => {
      const table = tableOf(node);
      if (!table || firstRow(table) !== node) return `\n${content}`;
      const cells = Array.from(node.childNodes).filter(
        (n) => n.nodeName === "TD" || n.nodeName === "TH",
      ).length;
      return `\n${content}\n|${" --- |".repeat(cells)}`;
    },
  });
  service.addRule("tableSection", {
    filter: (node) => ["THEAD", "TBODY", "TFOOT"].includes(node.nodeName) && inDataTable(node),
    replacement: (content) => content,
  });
  // The caption goes above the table as its own paragraph: inside, it would break the pipe rows.
  service.addRule("tableCaption", {
    filter: (node) => node.nodeName === "CAPTION" && inDataTable(node),
    replacement: () => "",
  });
  service.addRule("table", {
    filter: (node) => node.nodeName === "TABLE" && inDataTable(node),
    replacement: (content, node) => {
      const caption = Array.from(node.childNodes).find((n) => n.nodeName === "CAPTION");
      const title = caption?.textContent?.replace(/\s+/g, " ").trim();
      return `\n\n${title ? `${title}\n\n` : ""}${content.replace(/\n{2,}/g, "\n").trim()}\n\n`;
    },
  });
}
