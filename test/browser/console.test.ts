// The web console in a real headless Chromium against the real `sless dev` (child process, real
// git pushes and signed webhooks, real function processes): log in, see the examples, read a
// function's source, switch its http trigger off (/fn answers 503) and on again from the keyboard,
// watch a pushed function go from Building to Ready without reloading, see a broken manifest's
// file:line, and fail to open another namespace. Every main page is screenshotted into
// .sless-test/browser/ and checked with axe-core; no page may trip its Content-Security-Policy.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { SignJWT } from 'jose';
import type { Browser, Page } from 'puppeteer-core';
import { writeZip } from '../../src/http/write-zip.ts';
import { callFunction, eventually, giteaPush, startDevProcess, type DevProcess } from '../e2e/dev-harness.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { ARTIFACTS_DIR, launchBrowser, openPage, screenshot, seriousViolations, type WatchedPage } from './browser-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const EXAMPLES = ['clock-cron', 'greet-en', 'greet-ru', 'hello-go', 'hello-node', 'hello-python', 'sum-job'];

let clone: WorkClone;
let dev: DevProcess;
let browser: Browser;
let main: WatchedPage;
let page: Page;
let admin: string;

async function filesUnder(dir: string, prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) Object.assign(out, await filesUnder(p, `${prefix}${e.name}/`));
    else out[`${prefix}${e.name}`] = await readFile(p, 'utf8');
  }
  return out;
}

async function v1(method: string, url: string, body?: unknown, type = 'application/json'): Promise<Response> {
  return fetch(`${dev.url}/v1/namespaces/dev/${url}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
  });
}

const phaseOf = (name: string) =>
  page.$eval(`tr[data-fn="${name}"] [data-phase]`, (el) => el.getAttribute('data-phase')).catch(() => undefined);

/** Screenshot + axe: no serious or critical violation, no CSP violation. */
async function checkPage(name: string, watched: WatchedPage = main): Promise<void> {
  await screenshot(watched.page, name);
  const violations = await seriousViolations(watched.page);
  assert.deepEqual(violations, [], `${name}: axe found ${JSON.stringify(violations, null, 2)}`);
  assert.deepEqual(watched.problems, [], `${name}: the page broke its Content-Security-Policy or threw`);
}

before(async () => {
  const repo = await createRepo(sharedGitServer(), 'console-browser');
  clone = await WorkClone.create(repo);
  await clone.write(await filesUnder(path.join(root, 'examples'), 'examples/'));
  await clone.commitAndPush('examples');
  dev = await startDevProcess({ repo: repo.url, path: 'examples' });
  admin = await dev.adminToken();
  browser = await launchBrowser();
  main = await openPage(browser);
  page = main.page;
  // A function made through /v1 (so the console may switch it) with an http trigger of its own.
  assert.equal((await v1('POST', 'functions', { name: 'switchable', runtime: 'nodejs20' })).status, 201);
  const zip = writeZip([{ path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = async () => ({ on: true });\n') }]);
  assert.equal((await v1('POST', 'functions/switchable/upload', zip, 'application/zip')).status, 200);
});

after(async () => {
  await browser?.close();
  await dev?.dispose();
  await clone?.dispose();
});

test('a browser without a token gets the login page, and logs in by pasting a token', async () => {
  const res = await page.goto(`${dev.url}/funcs/dev`);
  assert.equal(res?.status(), 401);
  await page.waitForSelector('textarea#token');
  await checkPage('login');
  await page.type('textarea#token', admin);
  await Promise.all([page.waitForNavigation(), page.click('form.login button[type=submit]')]);
  assert.equal(new URL(page.url()).pathname, '/funcs/dev');
  const cookie = (await browser.cookies()).find((c) => c.name === `sless_console_${new URL(dev.url).port}`);
  assert.ok(cookie, 'the session cookie is set');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/funcs');
  assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the session');
});

test('the console link sless dev prints logs in, and leaves the address without the token', async () => {
  const link = /console\s+(http:\/\/\S+\/funcs\/dev\?token=\S+)/.exec(dev.log())?.[1];
  assert.ok(link, 'sless dev prints a console link with a token');
  const other = await browser.createBrowserContext();
  const p = await other.newPage();
  await p.goto(link);
  assert.equal(p.url(), `${dev.url}/funcs/dev`);
  assert.equal(await p.$eval('h1', (h) => h.textContent?.trim()), 'Functions in dev');
  await other.close();
});

test('the listing shows the examples with runtime, phase, URL, last build, code hash and owner', async () => {
  await page.goto(`${dev.url}/funcs/dev`);
  const rows = await eventually(async () => {
    await page.reload();
    const names = await page.$$eval('tr[data-fn]', (trs) => trs.map((tr) => tr.getAttribute('data-fn')));
    return EXAMPLES.every((n) => names.includes(n)) ? names : undefined;
  }, 'every example in the listing', 240_000);
  assert.deepEqual(
    rows.filter((n) => n !== 'switchable'),
    EXAMPLES,
  );
  await dev.waitForLog(/synced rev/, { timeoutMs: 240_000 });
  await page.reload();
  assert.equal(await phaseOf('hello-node'), 'Ready');
  const cells = await page.$$eval('tr[data-fn="hello-node"] td', (tds) => tds.map((td) => td.textContent?.replace(/\s+/g, ' ').trim()));
  assert.equal(cells[0], 'nodejs20');
  assert.match(cells[1] ?? '', /^Ready/);
  assert.match(cells[2] ?? '', new RegExp(`^${dev.url}/fn/dev/hello-node Copy$`));
  assert.match(cells[4] ?? '', /^sha256:[0-9a-f]{12}$/);
  assert.equal(cells[5], 'git:local');
  await checkPage('functions');
});

test('the copy button puts a function’s URL on the clipboard', async () => {
  await browser.defaultBrowserContext().overridePermissions(dev.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  await page.locator('button.copy[aria-label="Copy the URL of hello-node"]').click();
  await page.waitForFunction(`document.getElementById('announcer').textContent.startsWith('Copied')`);
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), `${dev.url}/fn/dev/hello-node`);
});

test('a function’s page shows its source, schedules with their next run and git-owned switches', async () => {
  await Promise.all([page.waitForNavigation(), page.click('tr[data-fn="clock-cron"] a')]);
  assert.equal(await page.$eval('h1', (h) => h.textContent), 'clock-cron');
  const source = await page.$eval('#source-h ~ ul.files pre code', (c) => c.textContent);
  assert.match(source ?? '', /exports\.handle = async/);
  // An every-minute schedule read in the last second before its run says "just now" (CI, 09:54:59).
  assert.match(await page.$eval('#schedules', (s) => s.textContent ?? ''), /Europe\/Moscow\s+(in \d+ (s|min)|just now) \d{4}-\d\d-\d\d \d\d:\d\d:00 UTC/);
  const owned = (await page.$$eval('#triggers .owned', (ss) => ss.map((s) => s.textContent?.replace(/\s+/g, ' ')))).join('\n');
  assert.match(owned, /Git owns this switch: change schedules in examples\/clock-cron\/function\.yaml/);
  await checkPage('function-git');
  await Promise.all([page.waitForNavigation(), page.click('a[href="/funcs/dev/source/clock-cron"]')]);
  assert.equal(await page.$eval('h1', (h) => h.textContent), 'Source of clock-cron');
  await checkPage('source');
});

test('switching an http trigger off makes /fn answer 503; switching it on from the keyboard serves again', async () => {
  await eventually(async () => (await callFunction(dev.url, 'switchable')).status === 200 || undefined, 'switchable to serve', 60_000);
  // The function's http trigger: the one its platform made, or one made here.
  const triggers = (await (await v1('GET', 'triggers')).json()) as Array<{ name: string; type: string; function_ref: string }>;
  let trigger = triggers.find((t) => t.function_ref === 'switchable' && t.type === 'http')?.name;
  if (!trigger) {
    trigger = 'switchable-web';
    assert.equal((await v1('POST', 'triggers', { name: trigger, type: 'http', function_ref: 'switchable' })).status, 201);
  }
  await page.goto(`${dev.url}/funcs/dev/functions/switchable`);
  const sw = `button[role="switch"][aria-label="HTTP trigger ${trigger}"]`;
  assert.equal(await page.$eval(sw, (b) => b.getAttribute('aria-checked')), 'true');
  await checkPage('function');

  await Promise.all([page.waitForNavigation(), page.click(sw)]);
  assert.equal(await page.$eval(sw, (b) => b.getAttribute('aria-checked')), 'false');
  assert.equal((await callFunction(dev.url, 'switchable')).status, 503);

  await page.focus(sw);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  assert.equal(await page.$eval(sw, (b) => b.getAttribute('aria-checked')), 'true');
  await eventually(async () => (await callFunction(dev.url, 'switchable')).status === 200 || undefined, 'switchable to serve again', 30_000);
});

test('a function’s page shows its schedule’s next run, its job’s result, its calls and a failed build’s log tail', async () => {
  assert.equal((await v1('POST', 'triggers', { name: 'switchable-nightly', type: 'cron', function_ref: 'switchable', schedule: '0 3 * * *', timezone: 'Europe/Moscow' })).status, 201);
  assert.equal((await v1('POST', 'jobs', { name: 'switchable-once', function_ref: 'switchable', event_json: { n: 2 }, run_id: 1 })).status, 201);
  for (let i = 0; i < 3; i++) await callFunction(dev.url, 'switchable');
  // A new version whose build fails: the old one keeps serving, the build's log tail is shown.
  const broken = writeZip([
    { path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = async () => ({ on: "v2" });\n') },
    { path: 'package.json', mode: '100644', content: Buffer.from(JSON.stringify({ name: 'switchable', version: '2.0.0', scripts: { install: 'echo "compiling assets"; echo "error: assets/logo.svg: no such file" >&2; exit 1' } })) },
  ]);
  assert.equal((await v1('POST', 'functions/switchable/upload', broken, 'application/zip')).status, 200);
  await eventually(async () => {
    const builds = (await (await v1('GET', 'functions/switchable/builds')).json()) as Array<{ outcome: string }>;
    return builds[0]?.outcome === 'failed' || undefined;
  }, 'the failed build', 90_000);
  await eventually(async () => {
    const job = (await (await v1('GET', 'jobs/switchable-once')).json()) as { phase: string };
    return job.phase === 'Succeeded' || undefined;
  }, 'the job', 60_000);
  await page.goto(`${dev.url}/funcs/dev/functions/switchable`);
  assert.match(await page.$eval('#schedules', (s) => s.textContent ?? ''), /0 3 \* \* \*\s+Europe\/Moscow\s+in \d+ (min|h)/);
  assert.match(await page.$eval('#jobs', (s) => s.textContent ?? ''), /switchable-once\s+1\s+Succeeded[\s\S]*"on":\s*true/);
  assert.match(await page.$eval('#invocations tbody', (s) => s.textContent?.replace(/\s+/g, ' ') ?? ''), /GET \/ 200 \d+ ms/);
  assert.match(await page.$eval('#builds pre.log', (s) => s.textContent ?? ''), /assets\/logo\.svg: no such file/);
  assert.match(await page.$eval('#summary', (s) => s.textContent ?? ''), /still serving the previous one/);
  await checkPage('function-full');
  await page.setViewport({ width: 1000, height: 1400 });
  await page.screenshot({ path: `${ARTIFACTS_DIR}/readme-function.png`, clip: { x: 0, y: 0, width: 1000, height: 1400 } });
  await page.setViewport({ width: 1200, height: 900 });
});

test('a pushed function goes from Building to Ready on the open page, and a broken manifest shows its file:line', async () => {
  await page.goto(`${dev.url}/funcs/dev`);
  // npm runs the package's own install script: a build that takes a few seconds, so Building shows.
  await clone.write({
    'examples/slow-build/function.yaml': 'runtime: nodejs20\n',
    'examples/slow-build/handler.js': 'exports.handle = async () => "built";\n',
    'examples/slow-build/package.json': JSON.stringify({ name: 'slow-build', version: '1.0.0', scripts: { install: 'node -e "setTimeout(() => {}, 8000)"' } }),
    'examples/broken/function.yaml': 'runtime: nodejs20\nmemory_mb: 1\n',
    'examples/broken/handler.js': 'exports.handle = async () => "never";\n',
  });
  const sha = await clone.commitAndPush('slow-build and broken');
  assert.equal((await giteaPush(dev, { after: sha })).status, 202);
  // No reload from here on: the page refreshes its own rows.
  await page.waitForSelector('tr[data-fn="slow-build"] [data-phase="Building"]', { timeout: 60_000 });
  await checkPage('functions-building');
  await page.waitForSelector('tr[data-fn="slow-build"] [data-phase="Ready"]', { timeout: 120_000 });
  await page.waitForFunction(`/slow-build is Ready/.test(document.getElementById('announcer').textContent)`, { timeout: 5_000 });
  assert.equal((await callFunction(dev.url, 'slow-build')).body, 'built');
  await page.waitForSelector('#problems code.problem');

  await Promise.all([page.waitForNavigation(), page.click('nav[aria-label="Console"] a[href="/funcs/dev/repositories"]')]);
  const problems = await page.$$eval('tr.has-problem code.problem', (cs) => cs.map((c) => c.textContent));
  assert.ok(problems.some((p) => /^examples\/broken\/function\.yaml:2: memory_mb: /.test(p ?? '')), `problems shown: ${problems.join(' | ')}`);
  await checkPage('repositories');
  await Promise.all([page.waitForNavigation(), page.click('form[action="/funcs/dev/repositories/local/sync"] button')]);
  assert.match(await page.$eval('.notice', (n) => n.textContent ?? ''), /Sync of local requested/);
});

test('another namespace’s page is refused, as /v1 refuses it', async () => {
  const ctx = await browser.createBrowserContext();
  const watched = await openPage(ctx);
  const alice = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('1h').sign(new TextEncoder().encode(dev.jwtSecret));
  const res = await watched.page.goto(`${dev.url}/funcs/dev?token=${alice}`);
  assert.equal(res?.status(), 403);
  assert.equal(await watched.page.$eval('h1', (h) => h.textContent), 'Not your namespace');
  assert.match(await watched.page.$eval('.error', (e) => e.textContent ?? ''), /this token owns namespace sless-[0-9a-f]{16}, not dev/);
  await checkPage('forbidden', watched);
  await ctx.close();
});

test('the pages fit a phone’s width', async () => {
  const phone = await openPage(browser, { width: 390, height: 844 });
  await phone.page.goto(`${dev.url}/funcs/dev`);
  const overflowOf = async () => Number(await phone.page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  const overflow = await overflowOf();
  assert.ok(overflow <= 0, `the listing is ${overflow} px wider than the phone`);
  await checkPage('functions-phone', phone);
  await phone.page.goto(`${dev.url}/funcs/dev/functions/switchable`);
  assert.ok((await overflowOf()) <= 0, 'the function page fits');
  await checkPage('function-phone', phone);
  await phone.page.close();
});
