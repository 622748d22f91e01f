/**
 * Debian's Chromium driven by playwright-core for the web terminal's walks. Headless, no sandbox (CI runs
 * as root), background networking off (the machine has no network beyond loopback); playwright gives each launch a fresh profile.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = (): boolean => existsSync(CHROMIUM);
/** Skip reason outside CI when Chromium is missing; under CI (.ci/run installs it) the walk runs and fails instead. */
export const chromiumSkip = (): string | false =>
  chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed (.ci/run installs it)';
export const SCREENSHOTS = join(process.cwd(), 'test-results', 'web');

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** Collects console errors and CSP violations: the walk fails on any. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource|WebSocket connection|ERR_CONNECTION_REFUSED/.test(m.text())) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}
