// A real headless browser for the console tests: the system's Chromium (Debian's `chromium`,
// installed by .ci/install.d/40-chromium.sh) driven by puppeteer-core, with screenshots kept as test
// artifacts under .sless-test/browser/ and axe-core's accessibility check.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS_DIR = path.join(root, '.sless-test', 'browser');

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumPath(): string {
  const found = [process.env.SLESS_TEST_CHROMIUM, ...CANDIDATES].find((p): p is string => !!p && existsSync(p));
  if (!found) {
    throw new Error(`no Chromium found (looked at ${CANDIDATES.join(', ')}); install it with .ci/install.d/40-chromium.sh or set SLESS_TEST_CHROMIUM`);
  }
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--font-render-hinting=none'],
  });
}

export interface WatchedPage {
  readonly page: Page;
  /** Content-Security-Policy violations and page errors seen so far (there must be none). */
  readonly problems: string[];
}

/** A page that records CSP violations (the console has no inline code, so any is a bug). */
export async function openPage(browser: Pick<Browser, 'newPage'>, viewport = { width: 1200, height: 900 }): Promise<WatchedPage> {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(`page error: ${(err as Error).message}`));
  await page.evaluateOnNewDocument(
    "document.addEventListener('securitypolicyviolation', (e) => console.error('Refused by the CSP: ' + e.violatedDirective + ' ' + e.blockedURI))",
  );
  return { page, problems };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file as `${string}.png`, fullPage: true });
  return file;
}

let axeSource: string | undefined;

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: number;
  readonly targets: string[];
}

/** Runs axe-core (WCAG 2.x A/AA rules and best practices) in the page; returns every violation. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through DevTools, which the page's strict CSP does not govern (a <script> tag would be refused).
  await page.evaluate(axeSource);
  const rules = JSON.stringify({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
  const result = (await page.evaluate(`axe.run(document, ${rules})`)) as {
    violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
}

/** Serious and critical violations only: what the console must never have. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
