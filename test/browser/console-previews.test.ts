// Pull-request previews in the console (docs/previews.md) in a real headless Chromium against the real
// `sless dev --previews` (a real git server, a signed pull_request delivery, real function processes):
// the Repositories page lists the open preview of its repository (number, branch, head, expiry, each
// function with built / production / removed and a link), the preview namespace's pages carry the
// "preview" badge and link back, a reviewer's token for the base namespace opens the preview read-only
// and calls its functions (docs/previews.md "Who may open a preview"), and closing the pull request
// empties the list. The base namespace is a tenant's (`sless-` + sha256(sub)), as on a shared server.
// Pages are screenshotted into .sless-test/browser/ and checked with axe-core and for
// Content-Security-Policy violations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SignJWT } from 'jose';
import type { Browser } from 'puppeteer-core';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { callFunction, eventually, giteaPullRequest, startDevProcess, type DevProcess } from '../e2e/dev-harness.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { launchBrowser, openPage, screenshot, seriousViolations, type WatchedPage } from './browser-kit.ts';

const fn = (name: string, version: string) => ({
  [`functions/${name}/function.yaml`]: 'runtime: nodejs20\n',
  [`functions/${name}/handler.js`]: `exports.handle = async () => ({ fn: '${name}', version: '${version}' });\n`,
});

let clone: WorkClone;
let dev: DevProcess;
let browser: Browser;
let main: WatchedPage;
let admin: string;
let head: string;
const PR = 12;
const REVIEWER = 'reviewer@example.com';
/** The base namespace: the reviewer's own, so the reviewer's token reaches its previews. */
const NS = namespaceForSubject(REVIEWER);
const PREVIEW = `${NS}-pr-${PR}`;
const tokenOf = (dev: DevProcess, sub: string) =>
  new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(new TextEncoder().encode(dev.jwtSecret));

async function checkPage(name: string): Promise<void> {
  await screenshot(main.page, name);
  const violations = await seriousViolations(main.page);
  assert.deepEqual(violations, [], `${name}: axe found ${JSON.stringify(violations, null, 2)}`);
  assert.deepEqual(main.problems, [], `${name}: the page broke its Content-Security-Policy or threw`);
}

const text = (s: string | null | undefined) => s?.replace(/\s+/g, ' ').trim();

before(async () => {
  clone = await WorkClone.create(await createRepo(sharedGitServer(), `console-previews-${process.pid}`));
  await clone.write({ ...fn('alpha', 'v1'), ...fn('beta', 'v1'), ...fn('gamma', 'v1') });
  await clone.commitAndPush('three functions');
  dev = await startDevProcess({ repo: clone.repo.url, path: 'functions', extraArgs: ['--namespace', NS, '--previews', '--preview-ttl', '2h'] });
  admin = await dev.adminToken();
  await dev.waitForLog(/synced rev/, { timeoutMs: 120_000 });
  // The PR changes alpha and deletes gamma; beta is left alone.
  await clone.run('checkout', '-q', '-b', 'feature-x');
  await clone.write(fn('alpha', 'v2'));
  await clone.remove('functions/gamma');
  head = await clone.commitAndPush('alpha v2, no gamma', { branch: 'feature-x' });
  const res = await giteaPullRequest(dev, { action: 'opened', number: PR, branch: 'feature-x', sha: head, namespace: NS });
  assert.equal(res.status, 202, await res.text());
  await eventually(async () => {
    const r = await callFunction(dev.url, 'alpha', undefined, PREVIEW);
    return r.status === 200 && r.body.includes('"v2"') ? true : undefined;
  }, 'the preview to serve alpha v2', 120_000);
  browser = await launchBrowser();
  main = await openPage(browser);
});

after(async () => {
  await browser?.close();
  await dev?.dispose();
  await clone?.dispose();
});

test('the Repositories page lists the open preview: number, branch, head, expiry, each function with its state and link', async () => {
  const page = main.page;
  await page.goto(`${dev.url}/funcs/${NS}/repositories?token=${admin}`);
  await page.waitForSelector(`tr[data-preview="${PR}"]`);
  const row = `tr#pr-${PR}`;
  assert.equal(text(await page.$eval(`${row} th`, (th) => th.textContent)), `#${PR} ${PREVIEW}`);
  assert.equal(await page.$eval(`${row} th a`, (a) => a.getAttribute('href')), `/funcs/${PREVIEW}`);
  const cells = await page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent?.replace(/\s+/g, ' ').trim()));
  assert.equal(cells[0], 'feature-x');
  assert.equal(cells[1], head.slice(0, 7));
  assert.match(cells[2] ?? '', /^in \d+ (h|min)$/, 'the script shows it relative to now');
  const expires = await page.$eval(`${row} td time`, (t) => t.getAttribute('datetime'));
  const inMs = Date.parse(expires ?? '') - Date.now();
  assert.ok(inMs > 110 * 60_000 && inMs <= 120 * 60_000, `expires in ${inMs} ms, the 2h ttl after the push`);
  assert.match(cells[3] ?? '', /^1 built, 1 from production, 1 removed /);
  const fns = await page.$$eval(`${row} li[data-fn]`, (lis) =>
    lis.map((li) => ({
      name: li.getAttribute('data-fn'),
      state: li.getAttribute('data-state'),
      href: li.querySelector('a')?.getAttribute('href') ?? null,
      url: li.querySelector('code.url')?.textContent ?? null,
    })),
  );
  assert.deepEqual(fns, [
    { name: 'alpha', state: 'built', href: `/funcs/${PREVIEW}/functions/alpha`, url: `${dev.url}/fn/${PREVIEW}/alpha` },
    { name: 'beta', state: 'production', href: `/funcs/${NS}/functions/beta`, url: `${dev.url}/fn/${NS}/beta` },
    { name: 'gamma', state: 'removed', href: null, url: null },
  ]);
  await checkPage('repositories-previews');
});

test('the preview namespace carries the preview badge and links back to its pull request; production has none', async () => {
  const page = main.page;
  await Promise.all([page.waitForNavigation(), page.click(`tr#pr-${PR} th a`)]);
  assert.equal(new URL(page.url()).pathname, `/funcs/${PREVIEW}`);
  assert.equal(text(await page.$eval('h1', (h) => h.textContent)), `Functions in ${PREVIEW} preview`);
  assert.match(text(await page.$eval('.preview-banner', (p) => p.textContent)) ?? '', new RegExp(`^preview of pull request #${PR} \\(branch feature-x\\) of local in ${NS}:`));
  assert.equal(await page.$eval('.preview-banner a', (a) => a.getAttribute('href')), `/funcs/${NS}/repositories#pr-${PR}`);
  assert.deepEqual(await page.$$eval('tr[data-fn]', (trs) => trs.map((tr) => tr.getAttribute('data-fn'))), ['alpha'], 'only what the PR built runs there');
  assert.equal(text(await page.$eval('tr[data-fn="alpha"] th', (th) => th.textContent)), 'alpha preview');
  await checkPage('preview-functions');

  await Promise.all([page.waitForNavigation(), page.click('tr[data-fn="alpha"] th a')]);
  assert.equal(text(await page.$eval('h1', (h) => h.textContent)), 'alpha preview');
  assert.ok(await page.$('.preview-banner'));
  await checkPage('preview-function');

  await page.goto(`${dev.url}/funcs/${NS}`);
  assert.equal(await page.$('.badge-preview'), null, 'production functions have no badge');
  assert.equal(await page.$('.preview-banner'), null);
});

test('a token for the base namespace opens the preview from the status’s link read-only, and calls its functions; another tenant’s is refused', async () => {
  const ctx = await browser.createBrowserContext();
  try {
    const reviewer = await openPage(ctx);
    const page = reviewer.page;
    // The `sless/preview` commit status links to /funcs/<namespace>-pr-<N>.
    const res = await page.goto(`${dev.url}/funcs/${PREVIEW}?token=${await tokenOf(dev, REVIEWER)}`);
    assert.equal(res?.status(), 200);
    assert.equal(text(await page.$eval('h1', (h) => h.textContent)), `Functions in ${PREVIEW} preview`);
    assert.match(text(await page.$eval('.preview-banner', (p) => p.textContent)) ?? '', /You may read it and call its functions; it changes through its pull request only/);

    await Promise.all([page.waitForNavigation(), page.click('tr[data-fn="alpha"] th a')]);
    assert.equal(await page.$('form.switch-form, form[action$="/rollback"], form[action$="/rollback/undo"]'), null, 'no form that would change the preview');
    await screenshot(page, 'preview-function-reviewer');
    assert.deepEqual(await seriousViolations(page), []);

    await page.goto(`${dev.url}/funcs/${PREVIEW}/functions/alpha/invoke`);
    await page.select('#invoke-method', 'GET');
    await page.$eval('#invoke-body', (el) => ((el as unknown as { value: string }).value = ''));
    await Promise.all([page.waitForNavigation(), page.click('form.invoke button[type=submit]')]);
    assert.equal(await page.$eval('[data-status]', (el) => el.textContent), '200');
    assert.deepEqual(JSON.parse((await page.$eval('#answer-body', (el) => el.textContent)) ?? ''), { fn: 'alpha', version: 'v2' });

    // A change the page does not offer, sent anyway with the page's own CSRF token: refused, saying why.
    const csrf = await page.$eval('input[name="_csrf"]', (el) => el.getAttribute('value'));
    const refused = await page.evaluate(
      async (url, token) => {
        const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: `enabled=false&_csrf=${token}` });
        return { status: r.status, body: (await r.json()) as { error: string } };
      },
      `${dev.url}/funcs/${PREVIEW}/triggers/alpha-http`,
      csrf ?? '',
    );
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /is the preview of pull request #12 of sless-[0-9a-f]{16}: this token may read it, but a preview is managed from its pull request/);
    assert.deepEqual(reviewer.problems, []);

    const other = await openPage(await browser.createBrowserContext());
    const refusedPage = await other.page.goto(`${dev.url}/funcs/${PREVIEW}?token=${await tokenOf(dev, 'mallory@example.com')}`);
    assert.equal(refusedPage?.status(), 403);
    assert.equal(await other.page.$eval('h1', (h) => h.textContent), 'Not your namespace');
    await other.page.browserContext().close();
  } finally {
    await ctx.close();
  }
});

test('closing the pull request removes its preview from the list, and the badge from its namespace', async () => {
  const res = await giteaPullRequest(dev, { action: 'closed', number: PR, branch: 'feature-x', sha: head, namespace: NS });
  assert.equal(res.status, 202, await res.text());
  const page = main.page;
  await eventually(async () => {
    await page.goto(`${dev.url}/funcs/${NS}/repositories`);
    return (await page.$(`tr#pr-${PR}`)) ? undefined : true;
  }, 'the preview to leave the list');
  assert.equal(text(await page.$eval('section.repo h3 + p', (p) => p.textContent)), 'No open previews.');
  await page.goto(`${dev.url}/funcs/${PREVIEW}`);
  assert.equal(await page.$('.badge-preview'), null);
});
