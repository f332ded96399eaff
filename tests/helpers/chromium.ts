/**
 * A real headless Chromium (Debian's `chromium`) driven by puppeteer-core, on a fresh profile that is
 * deleted when the browser closes. Background traffic (updates, sync, component downloads) is off, so
 * the only requests are the ones a test makes.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

/** Where the OS package puts the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Launches Chromium; `close()` on the browser also removes its profile once the process has exited.
 * `extraArgs` adds switches (a fake microphone: `--use-fake-device-for-media-stream`).
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const profile = mkdtempSync(join(tmpdir(), "herald-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      ...extraArgs,
    ],
  });
  // After the process has exited: until then Chromium may still write to the profile.
  const close = browser.close.bind(browser);
  browser.close = async () => {
    await close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  };
  return browser;
}
