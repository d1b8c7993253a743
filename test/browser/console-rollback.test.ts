// The console's Revisions section and pinned banner (issue 33, docs/rollback.md) in a real headless
// Chromium against the real `sless dev`: two versions went live, "Roll back to this" serves the first
// at once and shows the banner, "Undo the rollback" serves the folder's own version again. Both pages
// are screenshotted into .sless-test/browser/ and checked with axe-core (no serious or critical
// violation) and for Content-Security-Policy violations.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'puppeteer-core';
import { callFunction, eventually, startDevProcess, type DevProcess } from '../e2e/dev-harness.ts';
import { launchBrowser, openPage, screenshot, seriousViolations, type WatchedPage } from './browser-kit.ts';

let folder: string;
let dev: DevProcess;
let browser: Browser;
let main: WatchedPage;
let admin: string;

const writeVersion = (v: number) => writeFile(path.join(folder, 'fns/flip/handler.js'), `exports.handle = async () => ({ version: ${v} });\n`);
const served = async () => JSON.parse((await callFunction(dev.url, 'flip')).body) as { version: number };

async function checkPage(name: string): Promise<void> {
  await screenshot(main.page, name);
  const violations = await seriousViolations(main.page);
  assert.deepEqual(violations, [], `${name}: axe found ${JSON.stringify(violations, null, 2)}`);
  assert.deepEqual(main.problems, [], `${name}: the page broke its Content-Security-Policy or threw`);
}

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-console-rollback-'));
  await mkdir(path.join(folder, 'fns/flip'), { recursive: true });
  await writeFile(path.join(folder, 'fns/flip/function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\n');
  await writeVersion(1);
  dev = await startDevProcess({ repo: path.join(folder, 'fns') });
  admin = await dev.adminToken();
  await dev.waitForLog(/flip: ready at/);
  await writeVersion(2);
  const sync = await fetch(`${dev.url}/v1/namespaces/dev/repositories/local/sync`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(sync.status, 202);
  await eventually(async () => ((await served()).version === 2 ? true : undefined), 'version 2 to serve', 60_000);
  browser = await launchBrowser();
  main = await openPage(browser);
});

after(async () => {
  await browser?.close();
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('the Revisions section lists both versions; "Roll back to this" serves revision 1 at once and shows the pinned banner', async () => {
  const page = main.page;
  await page.goto(`${dev.url}/funcs/dev/functions/flip?token=${admin}`);
  await page.waitForSelector('#revisions-h');
  const rows = await page.$$eval('#revisions tr[data-revision]', (trs) => trs.map((tr) => tr.getAttribute('data-revision')));
  assert.deepEqual(rows, ['2', '1']);
  assert.equal(await page.$('button[aria-label="Roll back to this (revision 2)"]'), null, 'the serving revision has no button');
  await page.$eval('#revisions-h', (h) => h.scrollIntoView());
  await checkPage('function-revisions');

  await Promise.all([page.waitForNavigation(), page.click('button[aria-label="Roll back to this (revision 1)"]')]);
  assert.equal((await served()).version, 1);
  const banner = await page.$eval('.pinned', (el) => el.textContent?.replace(/\s+/g, ' ').trim());
  assert.match(banner ?? '', /^Pinned to revision 1 \(commit sha256:[0-9a-f]{12}\) by a rollback since [^.]+\. Git is ahead: new pushes build but do not go live\. Push a fix or undo the rollback\. Undo the rollback$/);
  await checkPage('function-pinned');

  await Promise.all([page.waitForNavigation(), page.click('.pinned button[type=submit]')]);
  assert.equal((await served()).version, 2);
  assert.equal(await page.$('.pinned'), null);
});
