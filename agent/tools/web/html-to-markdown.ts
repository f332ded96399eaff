/**
 * HTML → Markdown for the agent: linkedom parses, Mozilla Readability picks the article, turndown writes
 * Markdown. When the page does not look like an article (Readability's own `isProbablyReaderable`: a
 * link hub, a status table, a search result list) or Readability finds nothing, the whole body minus
 * scripts, navigation, header, footer and forms is converted instead: Readability on such pages keeps
 * one fragment and loses the rest.
 */
import { isProbablyReaderable, Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { addTableRules } from "./markdown-tables.js";

/** Elements that are never content: dropped before the body fallback and by turndown. */
const NOT_CONTENT = [
  "script",
  "style",
  "noscript",
  "template",
  "iframe",
  "form",
  "button",
  "svg",
  "canvas",
] as const;
/** Page chrome dropped in the body fallback (Readability drops it on its own). */
const CHROME =
  "nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true]";

let service: TurndownService | undefined;

function turndown(): TurndownService {
  if (service) return service;
  service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
    linkStyle: "inlined",
  });
  addTableRules(service);
  const dropped = new Set<string>([...NOT_CONTENT, "nav"]);
  service.remove((node) => dropped.has(node.nodeName.toLowerCase()));
  // An inline image is a data: URI of kilobytes of base64 that tells the model nothing: keep its alt text.
  service.addRule("inlineImage", {
    filter: (node) => node.nodeName === "IMG" && (node.getAttribute("src") ?? "").startsWith("data:"),
    replacement: (_content, node) => (node as HTMLElement).getAttribute("alt") ?? "",
  });
  return service;
}

/** Rewrites link and image addresses to absolute URLs (linkedom has no base URI for Readability to use). */
function absolutize(document: Document, baseUrl: string): void {
  for (const [selector, attribute] of [
    ["a[href]", "href"],
    ["img[src]", "src"],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute) ?? "";
      if (/^\s*javascript:/i.test(value)) {
        element.removeAttribute(attribute);
        continue;
      }
      try {
        element.setAttribute(attribute, new URL(value, baseUrl).href);
      } catch {
        // Not a URL we can resolve: leave it as the page wrote it.
      }
    }
  }
}

/**
 * Script and style bodies and comments, removed before parsing: they are dropped anyway, and on pages
 * heavy with inline scripts they are a fifth or more of the parse time. The first closing tag ends a
 * script, as in the HTML tokenizer.
 */
const NEVER_PARSED =
  /<script\b[^>]*>[\s\S]*?<\/script\s*>|<style\b[^>]*>[\s\S]*?<\/style\s*>|<!--[\s\S]*?-->/gi;

function parse(html: string, baseUrl: string): Document {
  // linkedom's Document implements the DOM interfaces Readability and turndown use; its own types differ.
  const { document } = parseHTML(html.replace(NEVER_PARSED, "")) as unknown as { document: Document };
  absolutize(document, baseUrl);
  return document;
}

function tidy(markdown: string): string {
  return markdown
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * The readable content of an HTML page as Markdown (headings, lists, links, code kept) and its title.
 * `baseUrl` resolves relative links. Pure apart from CPU; never throws on malformed HTML.
 */
export function htmlToMarkdown(html: string, baseUrl: string): { title: string; markdown: string } {
  const document = parse(html, baseUrl);
  const pageTitle = document.title?.trim() ?? "";
  const article = isProbablyReaderable(document) ? new Readability(document).parse() : null;
  if (article?.content && article.textContent?.trim()) {
    const markdown = tidy(turndown().turndown(article.content));
    if (markdown) return { title: article.title?.trim() || pageTitle, markdown };
  }
  // Readability changed the first tree; the fallback starts again from the page as served.
  const fresh = parse(html, baseUrl);
  for (const element of fresh.querySelectorAll(`${NOT_CONTENT.join(", ")}, ${CHROME}`)) element.remove();
  const body = fresh.body;
  const markdown = body ? tidy(turndown().turndown(body.innerHTML)) : "";
  return { title: pageTitle, markdown: markdown || tidy(body?.textContent ?? "") };
}
