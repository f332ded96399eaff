#!/usr/bin/env node
/**
 * Captures of `herald chat`'s main states for the docs (docs/screenshots/): the built binary in a tmux
 * pane against the scripted model, each state saved as text (`<name>.txt`) and, drawn from the pane's
 * colours by Chromium, as a PNG (`<name>.png`). Run `npm run build` first; needs tmux and
 * /usr/bin/chromium (the PNGs are skipped without it).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "docs", "screenshots");
const { startFakeLlm } = await import(join(root, "dist", "tests", "fakes", "llm", "index.js"));
const socket = `herald-shots-${process.pid}`;
const tmux = (...args) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(text, timeoutMs = 15_000) {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    if (tmux("capture-pane", "-p", "-t", "shot").includes(text)) return;
    await sleep(100);
  }
  throw new Error(`the screen never showed ${text}:\n${tmux("capture-pane", "-p", "-t", "shot")}`);
}
const type = (text) => tmux("send-keys", "-t", "shot", "-l", text);
const keys = (...k) => tmux("send-keys", "-t", "shot", ...k);

const shots = [];
function shot(name, title) {
  const text = tmux("capture-pane", "-p", "-t", "shot");
  const ansi = tmux("capture-pane", "-p", "-e", "-t", "shot");
  writeFileSync(join(out, `terminal-${name}.txt`), text);
  shots.push({ name, title, ansi });
  console.log(`captured ${name}`);
}

const REPLY = `## What changed today

Three commits landed on **main**:

1. \`adapters/cli\`: the terminal UI
2. \`adapters/api\`: routes for chat clients
3. docs and tests

\`\`\`ts
export function wantsTui(options: { plain?: boolean }): boolean {
  return !options.plain && process.stdout.isTTY === true;
}
\`\`\`

Run \`npm test\` to check them.`;

const llm = await startFakeLlm();
const home = mkdtempSync(join(tmpdir(), "herald-shots-"));
mkdirSync(out, { recursive: true });
try {
  const env = `HERALD_HOME=${home} OPENAI_BASE_URL=${llm.url} OPENAI_API_KEY=k HERALD_MODEL=fake-model HERALD_EXEC_BACKEND=local TERM=tmux-256color LANG=C.UTF-8`;
  tmux(
    "new-session",
    "-d",
    "-s",
    "shot",
    "-x",
    "80",
    "-y",
    "24",
    `cd ${root} && exec env -u CI ${env} ${process.execPath} dist/app/cli.js chat`,
  );
  await waitFor("● ready");

  llm.script(
    { toolCalls: [{ name: "terminal", arguments: { command: "uname -sr && date +%F" } }] },
    { text: REPLY, pieces: 30, chunkDelayMs: 120 },
  );
  type("what changed in the repo today?");
  keys("Enter");
  await waitFor("Three commits");
  shot("streaming", "A reply streaming in, after a tool call");
  await waitFor("Run npm test");
  await waitFor("● ready");
  shot("reply", "The whole reply: Markdown, highlighted code, the tool line");
  keys("C-o");
  await sleep(300);
  shot("tool-output", "Ctrl+O opens the tool calls' output");
  keys("C-o");

  llm.script(
    { toolCalls: [{ name: "terminal", arguments: { command: "chattr -i build/ && rm -rf build" } }] },
    { text: "Cleaned the build folder." },
  );
  type("clean the build folder");
  keys("Enter");
  await waitFor("Deny");
  shot("approval", "An approval: choose with ↑/↓ and Enter, or the number");
  keys("3");
  await sleep(800);

  type("/se");
  await waitFor("/sessions");
  shot("completion", "/ completes the gateway's commands");
  keys("Escape", "Escape");
  type("/new");
  keys("Enter");
  await waitFor("New session started");
  llm.script({ text: "Fine: the release notes go out on Friday." });
  type("when do the release notes go out?");
  keys("Enter");
  await waitFor("Friday");
  type("/resume");
  keys("Enter");
  await waitFor("Reopen which session?");
  shot("resume", "/resume picks one of the chat's sessions");
  keys("Escape");

  tmux("resize-window", "-t", "shot", "-x", "60", "-y", "24");
  await sleep(800);
  shot("narrow", "At 60 columns everything rewraps");
} finally {
  spawnSync("tmux", ["-L", socket, "kill-server"]);
  await llm.close();
  rmSync(home, { recursive: true, force: true });
}

/** Each capture as a PNG: its colours as HTML, drawn by a headless Chromium. */
async function renderPngs() {
  const chromium = "/usr/bin/chromium";
  if (!existsSync(chromium)) {
    console.log("no /usr/bin/chromium: text captures only");
    return;
  }
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--headless=new"],
  });
  try {
    const page = await browser.newPage();
    for (const { name, title, ansi } of shots) {
      await page.setContent(html(ansi, title));
      const box = await (await page.$("pre")).boundingBox();
      await page.setViewport({ width: Math.ceil(box.width) + 32, height: Math.ceil(box.height) + 32 });
      await page.screenshot({
        path: join(out, `terminal-${name}.png`),
        clip: { x: 0, y: 0, width: Math.ceil(box.width) + 32, height: Math.ceil(box.height) + 32 },
      });
      console.log(`drew terminal-${name}.png`);
    }
  } finally {
    await browser.close();
  }
}

const COLOURS = ["#1d1f21", "#cc6666", "#b5bd68", "#f0c674", "#81a2be", "#b294bb", "#8abeb7", "#c5c8c6"];
const BRIGHT = ["#969896", "#d54e53", "#b9ca4a", "#e7c547", "#7aa6da", "#c397d8", "#70c0b1", "#eaeaea"];

function html(ansi, title) {
  const esc = (s) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  let state = {};
  let body = "";
  for (const part of ansi.replace(/\n+$/, "").split(/(\x1b\[[0-9;]*m)/)) {
    const m = /^\x1b\[([0-9;]*)m$/.exec(part);
    if (!m) {
      if (!part) continue;
      const style = [
        state.fg ? `color:${state.fg}` : "",
        state.bold ? "font-weight:bold" : "",
        state.dim ? "opacity:0.6" : "",
        state.italic ? "font-style:italic" : "",
        state.underline ? "text-decoration:underline" : "",
        state.inverse ? "background:#c5c8c6;color:#1d1f21" : "",
      ].filter(Boolean);
      body += style.length ? `<span style="${style.join(";")}">${esc(part)}</span>` : esc(part);
      continue;
    }
    for (const code of (m[1] || "0").split(";").map(Number)) {
      if (code === 0) state = {};
      else if (code === 1) state.bold = true;
      else if (code === 2) state.dim = true;
      else if (code === 3) state.italic = true;
      else if (code === 4) state.underline = true;
      else if (code === 7) state.inverse = true;
      else if (code === 22) state.bold = state.dim = false;
      else if (code === 23) state.italic = false;
      else if (code === 24) state.underline = false;
      else if (code === 27) state.inverse = false;
      else if (code >= 30 && code <= 37) state.fg = COLOURS[code - 30];
      else if (code >= 90 && code <= 97) state.fg = BRIGHT[code - 90];
      else if (code === 39) state.fg = undefined;
    }
  }
  return `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{margin:0;background:#1d1f21}pre{display:inline-block;margin:16px;color:#c5c8c6;font:14px/1.25 "DejaVu Sans Mono",monospace}</style>
<pre>${body}</pre>`;
}

await renderPngs();
