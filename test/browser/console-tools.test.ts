// The function page's Logs, Invoke and Charts tabs (issue 33) in a real headless Chromium against a
// real `sless dev` serving a plain folder: a printed line appears in the live tail (server-sent events)
// without reloading and the stream filter hides the others; the Invoke form's call goes through /fn
// and shows status, headers, body and duration; the charts draw the calls as inline SVG with a table
// each. Each page is screenshotted into .sless-test/browser/ and checked with axe-core (no serious or
// critical violation) and for Content-Security-Policy violations.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { eventually, startDevProcess, type DevProcess } from '../e2e/dev-harness.ts';
import { launchBrowser, openPage, screenshot, seriousViolations, type WatchedPage } from './browser-kit.ts';

let folder: string;
let dev: DevProcess;
let browser: Browser;
let main: WatchedPage;
let page: Page;
let base: string;

async function checkPage(name: string): Promise<void> {
  await screenshot(page, name);
  const violations = await seriousViolations(page);
  assert.deepEqual(violations, [], `${name}: axe found ${JSON.stringify(violations, null, 2)}`);
  assert.deepEqual(main.problems, [], `${name}: the page broke its Content-Security-Policy or threw`);
}

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-console-tools-'));
  await mkdir(path.join(folder, 'talker'));
  await writeFile(path.join(folder, 'talker/function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\n');
  await writeFile(
    path.join(folder, 'talker/handler.js'),
    "exports.handle = async (event) => { console.log(`said ${event.word}`); console.error('a warning'); if (event.fail) throw new Error('asked to fail'); return { echo: event }; };\n",
  );
  dev = await startDevProcess({ repo: folder });
  await dev.waitForLog(/talker: ready at/);
  browser = await launchBrowser();
  main = await openPage(browser);
  page = main.page;
  base = `${dev.url}/funcs/dev/functions/talker`;
  await page.goto(`${dev.url}/funcs/dev?token=${await dev.adminToken()}`);
});

after(async () => {
  await browser?.close();
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

const call = (body: object) => fetch(`${dev.url}/fn/dev/talker`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('the function page has Overview, Logs, Invoke and Charts tabs', async () => {
  await page.goto(base);
  const tabs = await page.$$eval('nav.tabs a', (as) => as.map((a) => [a.textContent?.trim(), a.getAttribute('aria-current')]));
  assert.deepEqual(tabs, [['Overview', 'page'], ['Logs', null], ['Invoke', null], ['Charts', null]]);
});

test('Logs: the last lines, then a new line appears live; the stream filter hides the others', async () => {
  await call({ word: 'before' });
  await page.goto(`${base}/logs`);
  const first = await page.$$eval('#log-lines li', (lis) => lis.map((li) => li.textContent ?? ''));
  assert.ok(first.some((t) => /said before/.test(t)), first.join('\n'));
  await page.waitForFunction("document.getElementById('tail-state').textContent === 'following new lines'");
  await call({ word: 'live' });
  await page.waitForFunction("Array.from(document.querySelectorAll('#log-lines li')).some((li) => /said live/.test(li.textContent))", { timeout: 5000 });
  await page.select('#stream-filter', 'stderr');
  const visible = await page.$$eval('#log-lines li:not([hidden])', (lis) => lis.map((li) => li.getAttribute('data-stream')));
  assert.ok(visible.length > 0 && visible.every((s) => s === 'stderr'), JSON.stringify(visible));
  const replicas = await page.$$eval('#replica-filter option', (os) => os.map((o) => o.value));
  assert.ok(replicas.some((r) => /^pid-\d+$/.test(r)), JSON.stringify(replicas));
  await page.select('#stream-filter', '');
  await checkPage('function-logs');
});

test('Invoke: the form calls the function through /fn and shows status, headers, body and duration', async () => {
  await page.goto(`${base}/invoke`);
  await page.select('#invoke-method', 'POST');
  await page.$eval('#invoke-body', (el) => ((el as unknown as { value: string }).value = ''));
  await page.type('#invoke-body', '{"word": "from the form", "list": [1, 2]}');
  await page.type('#invoke-headers', 'x-demo: yes');
  await Promise.all([page.waitForNavigation(), page.click('form.invoke button[type=submit]')]);
  assert.equal(await page.$eval('[data-status]', (el) => el.textContent), '200');
  assert.match((await page.$eval('[data-duration]', (el) => el.textContent)) ?? '', /^\d+ ms$/);
  assert.deepEqual(JSON.parse((await page.$eval('#answer-body', (el) => el.textContent)) ?? ''), { echo: { word: 'from the form', list: [1, 2] } });
  const headerNames = await page.$$eval('.answer tbody th', (ths) => ths.map((th) => th.textContent));
  assert.ok(headerNames.includes('content-type'), JSON.stringify(headerNames));
  assert.ok(!headerNames.includes('transfer-encoding') && !headerNames.includes('connection'), 'the transport’s own headers are not the answer’s');
  await checkPage('function-invoke');

  // Without the page's CSRF token the same post is refused.
  const forged = await page.evaluate(async (url) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'method=GET&path=/' });
    return res.status;
  }, `${base}/invoke`);
  assert.equal(forged, 403);

  // A bad header line is named on the form, not sent.
  await page.goto(`${base}/invoke`);
  await page.type('#invoke-headers', 'no colon here');
  await Promise.all([page.waitForNavigation(), page.click('form.invoke button[type=submit]')]);
  assert.match((await page.$eval('.problem', (el) => el.textContent)) ?? '', /headers line 1 is not "name: value"/);
});

test('Charts: requests per minute, p50/p95 and error rate drawn as SVG, each with its table', async () => {
  for (let i = 0; i < 5; i++) await call({ word: `n${i}` });
  await call({ fail: true });
  await eventually(async () => {
    await page.goto(`${base}/charts`);
    const summary = await page.$eval('#chart-hour-rate-d', (el) => el.textContent);
    return /^\d+ calls/.test(summary ?? '') && !/^0 calls/.test(summary ?? '') ? summary : undefined;
  }, 'the calls in the hour chart', 10_000);
  assert.equal(await page.$$eval('svg.chart', (s) => s.length), 6);
  assert.match((await page.$eval('#chart-hour-errors-d', (el) => el.textContent)) ?? '', /^[1-9]\d* of \d+ calls answered 5xx/);
  const rows = await page.$$eval('figure.chart-box table tbody tr', (trs) => trs.length);
  assert.equal(rows, 3 * 60 + 3 * 24, 'a row per bucket behind every chart');
  await checkPage('function-charts');
});
