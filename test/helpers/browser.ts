import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe } from 'vitest';

/**
 * Real-browser tests drive Debian's chromium (`apt-get install chromium fonts-wqy-microhei`): Playwright's own
 * browser download cannot work offline, so the binary is found by path, never by `channel`.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Without the networking flags chromium keeps trying hosts that do not resolve here (component updates, sync). */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots taken by tests (git-ignored); the committed ones in the docs are copied from here on purpose. */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-results', 'screenshots');

export const browserAvailable = existsSync(CHROMIUM_PATH);

let noticed = false;

/**
 * `describe` for a suite that needs chromium. Without the binary the suite skips with a visible notice, except
 * under `CI=true`, where it fails: a CI image that lost its install step must not pass by testing nothing.
 */
export function describeBrowser(name: string, body: () => void): void {
  if (browserAvailable) {
    describe(name, body);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      throw new Error(
        `${CHROMIUM_PATH} is missing and CI=true: install chromium and fonts-wqy-microhei (see .ci/run)`,
      );
    });
    return;
  }
  if (!noticed) {
    noticed = true;
    process.stderr.write(
      `NOTICE: browser tests skipped: ${CHROMIUM_PATH} not found ` +
        '(apt-get install chromium fonts-wqy-microhei, or set CHROMIUM_PATH)\n',
    );
  }
  // biome-ignore lint/suspicious/noSkippedTests: the skip is the documented fallback without chromium, announced above.
  describe.skip(name, body);
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

/** A page whose Content-Security-Policy violations and uncaught errors are collected, so a test can assert none. */
export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** `securitypolicyviolation` events seen by any document of the page: `directive blocked-uri`. */
  cspViolations: string[];
  /** Uncaught exceptions and `console.error` lines. */
  errors: string[];
}

export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
  });
  const cspViolations: string[] = [];
  const errors: string[] = [];
  await context.exposeBinding('__reportCsp', (_source, line: string) => {
    cspViolations.push(line);
  });
  // A string, not a function: the repo's tsconfig has no DOM types, and this runs in the page.
  await context.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => __reportCsp(e.violatedDirective + ' ' + e.blockedURI));",
  );
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { context, page, cspViolations, errors };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
