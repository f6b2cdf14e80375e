import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
const CHROMIUM = "/usr/bin/chromium";

/**
 * Flags of a headless Chromium on a machine without a network: without the background ones it
 * keeps trying to reach Google's hosts.
 */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface BrowserHarness {
  /** A new page in a context of its own: its own session storage, so its own sign-in. */
  page(): Promise<Page>;
}

/** A headless Chromium for the file's tests, closed after them. */
export function useBrowser(): BrowserHarness {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async page() {
      if (!browser) throw new Error("browser not started");
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        acceptDownloads: true,
      });
      return context.newPage();
    },
  };
}
