/**
 * The browser tools' declarations (toolset "browser"); their implementation (`tools-page.ts`,
 * `tools-act.ts`, `tools-files.ts`, and puppeteer-core behind them) loads on the first call. The
 * process builds the toolset with `createBrowserTools` (`setup.ts`), which binds them to its browser.
 */

import { z } from "zod";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool } from "../../types.js";
import { type BrowserToolsDeps, FULL_SNAPSHOT_CHARS, hostOf, SNAPSHOT_CHARS } from "./common.js";
import { describeRef } from "./snapshot.js";

const refParam = z.string().regex(/^e\d+$/, "a ref like e12 from the latest snapshot");

/** `browser_navigate` as the model gets it. */
export const browserNavigateParameters = z.object({ url: z.string().min(1).describe("An http(s) URL.") });

/** `browser_snapshot` as the model gets it. */
export const browserSnapshotParameters = z.object({
  full: z
    .boolean()
    .optional()
    .describe(`Up to ${FULL_SNAPSHOT_CHARS} characters (default ${SNAPSHOT_CHARS}).`),
  page: z.number().int().min(1).optional().describe("Which page of a long snapshot (default 1)."),
});

/** `browser_back` as the model gets it. */
export const browserBackParameters = z.object({});

/** `browser_scroll` as the model gets it. */
export const browserScrollParameters = z.object({
  direction: z.enum(["up", "down"]),
  amount: z.number().positive().max(50).optional().describe("Screens to scroll (default 1)."),
});

/** `browser_wait` as the model gets it. */
export const browserWaitParameters = z.object({
  text: z.string().min(1).optional().describe("Wait until the page shows this text."),
  ms: z.number().int().min(1).max(30_000).optional().describe("How long to wait (at most 30000)."),
});

/** `browser_console` as the model gets it. */
export const browserConsoleParameters = z.object({});

/** `browser_get_images` as the model gets it. */
export const browserGetImagesParameters = z.object({});

/** `browser_close` as the model gets it. */
export const browserCloseParameters = z.object({});

/** `browser_click` as the model gets it. */
export const browserClickParameters = z.object({ ref: refParam });

/** `browser_type` as the model gets it. */
export const browserTypeParameters = z.object({
  ref: refParam,
  text: z.string().max(10_000),
  submit: z.boolean().optional().describe("Press Enter after typing (sends the form)."),
});

/** `browser_select` as the model gets it. */
export const browserSelectParameters = z.object({ ref: refParam, value: z.string() });

/** `browser_press` as the model gets it. */
export const browserPressParameters = z.object({ key: z.string().min(1).max(40) });

/** `browser_screenshot` as the model gets it. */
export const browserScreenshotParameters = z.object({
  full_page: z.boolean().optional().describe("The whole page, not only what fits the window."),
  question: z.string().max(2000).optional().describe("What to ask the vision model about it."),
});

/** `browser_download` as the model gets it. */
export const browserDownloadParameters = z.object({
  ref: z
    .string()
    .regex(/^e\d+$/)
    .optional()
    .describe("A link's ref from the latest snapshot."),
  url: z.string().min(1).optional().describe("The file's URL, when not a link on the page."),
});

const pageRuns = runsFrom(() => import("./tools-page.js"), "pageTools");
const actRuns = runsFrom(() => import("./tools-act.js"), "actTools");
const fileRuns = runsFrom(() => import("./tools-files.js"), "fileTools");

/** A ref as a progress line names it: its element's role and name, once a snapshot showed it. */
const named = (ref: string) => describeRef(ref) ?? ref;

/** The page-reading and acting tools, in the order the model sees them. */
const pageAndActTools = [
  declareTool<typeof browserNavigateParameters, BrowserToolsDeps>({
    name: "browser_navigate",
    description:
      "Open a URL in a real browser (JavaScript runs, cookies persist for this conversation). Returns the title, the final URL and a snapshot of the page: its elements with refs like [e12] to use with browser_click, browser_type and browser_select.",
    parameters: browserNavigateParameters,
    toolset: "browser",
    label: (args) => `🌐 ${hostOf(args.url)}`,
    implementation: pageRuns("browser_navigate"),
  }),
  declareTool<typeof browserSnapshotParameters, BrowserToolsDeps>({
    name: "browser_snapshot",
    description:
      "The current page as an accessibility tree: headings, text, and the elements you can act on with refs like [e12]. Refs change with every snapshot; use the latest.",
    parameters: browserSnapshotParameters,
    toolset: "browser",
    label: () => "📄 snapshot",
    implementation: pageRuns("browser_snapshot"),
  }),
  declareTool<typeof browserBackParameters, BrowserToolsDeps>({
    name: "browser_back",
    description: "Go back to the previous page of this tab. Returns its snapshot.",
    parameters: browserBackParameters,
    toolset: "browser",
    label: () => "⬅️ back",
    implementation: pageRuns("browser_back"),
  }),
  declareTool<typeof browserScrollParameters, BrowserToolsDeps>({
    name: "browser_scroll",
    description: "Scroll the page (for pages that load more as you scroll, and for screenshots).",
    parameters: browserScrollParameters,
    toolset: "browser",
    label: (args) => `↕️ scroll ${args.direction}`,
    implementation: pageRuns("browser_scroll"),
  }),
  declareTool<typeof browserWaitParameters, BrowserToolsDeps>({
    name: "browser_wait",
    description: "Wait until a text appears on the page, or for a number of milliseconds.",
    parameters: browserWaitParameters,
    toolset: "browser",
    label: (args) => (args.text ? `⏳ wait for "${args.text}"` : `⏳ wait ${args.ms ?? 1000} ms`),
    implementation: pageRuns("browser_wait"),
  }),
  declareTool<typeof browserConsoleParameters, BrowserToolsDeps>({
    name: "browser_console",
    description: "The page's recent console messages and script errors (the latest 100).",
    parameters: browserConsoleParameters,
    toolset: "browser",
    label: () => "🧾 console",
    implementation: pageRuns("browser_console"),
  }),
  declareTool<typeof browserGetImagesParameters, BrowserToolsDeps>({
    name: "browser_get_images",
    description: "The images of the current page: their URL (src) and alternative text, the first 100.",
    parameters: browserGetImagesParameters,
    toolset: "browser",
    label: () => "🖼️ images",
    implementation: pageRuns("browser_get_images"),
  }),
  declareTool<typeof browserCloseParameters, BrowserToolsDeps>({
    name: "browser_close",
    description:
      "Close this conversation's browser: its tabs, cookies and logins. The next call starts afresh.",
    parameters: browserCloseParameters,
    toolset: "browser",
    label: () => "🌐 close the browser",
    implementation: pageRuns("browser_close"),
  }),
  declareTool<typeof browserClickParameters, BrowserToolsDeps>({
    name: "browser_click",
    description:
      "Click an element by its ref from the latest snapshot. Returns the page's snapshot afterwards.",
    parameters: browserClickParameters,
    toolset: "browser",
    label: (args) => `🖱️ click ${named(args.ref)}`,
    implementation: actRuns("browser_click"),
  }),
  declareTool<typeof browserTypeParameters, BrowserToolsDeps>({
    name: "browser_type",
    description:
      "Type text into a field by its ref (what was in it is replaced). submit: true presses Enter afterwards. Returns the page's snapshot.",
    parameters: browserTypeParameters,
    toolset: "browser",
    label: (args) => `⌨️ type into ${named(args.ref)}${args.submit ? " and submit" : ""}`,
    implementation: actRuns("browser_type"),
  }),
  declareTool<typeof browserSelectParameters, BrowserToolsDeps>({
    name: "browser_select",
    description:
      "Choose an option of a select element (dropdown) by its ref, by the option's value or its text.",
    parameters: browserSelectParameters,
    toolset: "browser",
    label: (args) => `☑️ select "${args.value}" in ${named(args.ref)}`,
    implementation: actRuns("browser_select"),
  }),
  declareTool<typeof browserPressParameters, BrowserToolsDeps>({
    name: "browser_press",
    description:
      "Press a key in the page (Enter, Tab, Escape, ArrowDown, PageDown, Backspace…) where the focus is.",
    parameters: browserPressParameters,
    toolset: "browser",
    label: (args) => `⌨️ press ${args.key}`,
    implementation: actRuns("browser_press"),
  }),
];

const downloadTool = declareTool<typeof browserDownloadParameters, BrowserToolsDeps>({
  name: "browser_download",
  description:
    "Download a file into the workspace's downloads/ folder: a link by its ref, or a URL (relative to the page), with this tab's cookies.",
  parameters: browserDownloadParameters,
  toolset: "browser",
  label: (args) => `⬇️ download ${args.ref ? (describeRef(args.ref) ?? args.ref) : hostOf(args.url ?? "")}`,
  implementation: fileRuns("browser_download"),
});

/** `browser_screenshot`, whose description says what the vision model does with it when there is one. */
function screenshotTool(vision: boolean) {
  return declareTool<typeof browserScreenshotParameters, BrowserToolsDeps>({
    name: "browser_screenshot",
    description: `Take a screenshot of the current tab into the workspace (a PNG; send it to the chat with send_message).${vision ? " The vision model describes it, or answers your question about it." : ""}`,
    parameters: browserScreenshotParameters,
    toolset: "browser",
    label: () => "📸 screenshot",
    implementation: fileRuns("browser_screenshot"),
  });
}

const screenshotTools = { vision: screenshotTool(true), plain: screenshotTool(false) };

/** The browser tools, bound to `deps`, in the order the model sees them. */
export function browserTools(deps: BrowserToolsDeps): Tool[] {
  const screenshot = deps.vision ? screenshotTools.vision : screenshotTools.plain;
  return [...pageAndActTools, screenshot, downloadTool].map((tool) => tool.with(deps));
}
