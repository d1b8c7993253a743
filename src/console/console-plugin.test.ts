// The console's HTTP surface through app.inject() on the memory platform: the old console's routes
// and answers (HTML, plain text for curl, JSON), login and its cookie, the /v1 namespace rule, CSRF,
// and the headers that keep the pages safe.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { csrfTokenOf } from './session.ts';
import { hs256Token, NS, testApp, type TestApp } from '../../test/helpers/http-test-kit.ts';
import { addManyFunctions } from '../../test/helpers/many-functions.ts';
import type { MemoryPlatform } from '../../test/helpers/memory-platform.ts';
import { unpacked } from '../../test/helpers/unpacked-code.ts';

let t: TestApp;
let app: FastifyInstance;
let platform: MemoryPlatform;
let token: string;
const logs: string[] = [];
const cookie = (tok = token) => ({ cookie: `sless_console=${tok}` });
const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
/** A link opened from outside any web page (typed, pasted, a terminal's link): Sec-Fetch-Site none. */
const opened = { ...browser, 'sec-fetch-site': 'none' };

before(async () => {
  t = await testApp({ console: { exclude: ['internal-*'] }, logger: { level: 'info', stream: { write: (l: string) => void logs.push(l) } } });
  ({ app, platform } = t);
  token = await hs256Token();
  for (const name of ['hello', 'internal-metrics', 'zeta']) {
    await platform.createFunction(NS, { name, runtime: 'nodejs20' });
    platform.serve(NS, name, 'http://127.0.0.1:9');
  }
  platform.functions.set(`${NS}/hello`, { ...(await platform.getFunction(NS, 'hello')), phase: 'Ready', url: `http://localhost/fn/${NS}/hello` });
  platform.functions.set(`${NS}/zeta`, { ...(await platform.getFunction(NS, 'zeta')), phase: 'Failed', message: 'build failed: npm ERR! 404' });
  await platform.createTrigger(NS, { name: 'hello-http', type: 'http', functionRef: 'hello' });
  await platform.createTrigger(NS, { name: 'internal-metrics-http', type: 'http', functionRef: 'internal-metrics' });
  await platform.uploadCode(NS, 'hello', await unpacked([
    { path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = () => "<b>hi</b>";\n') },
    { path: 'logo.bin', mode: '100644', content: Buffer.from([0, 1, 2, 255]) },
  ]));
  platform.functions.set(`${NS}/hello`, { ...(await platform.getFunction(NS, 'hello')), phase: 'Ready' });
  await platform.createRepository(NS, { name: 'team', url: 'https://git.example/team.git' });
});
after(() => app.close());

describe('without a token', () => {
  it('answers 401 with a hint on how to log in (plain text for curl)', async () => {
    const res = await app.inject({ url: '/funcs' });
    assert.equal(res.statusCode, 401);
    assert.match(res.headers['content-type'] as string, /^text\/plain/);
    assert.match(res.body, /open \/funcs\?token=<jwt> once in a browser/);
    assert.match(res.body, /Authorization: Bearer <jwt>/);
  });
  it('shows browsers a login form that posts the token', async () => {
    const res = await app.inject({ url: `/funcs/${NS}`, headers: browser });
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /<form class="login" method="post" action="\/funcs\/_login">/);
    assert.match(res.body, new RegExp(`name="next" value="/funcs/${NS}"`));
  });
  it('answers JSON clients with the /v1 error shape', async () => {
    const res = await app.inject({ url: `/funcs/${NS}`, headers: { accept: 'application/json' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'unauthorized');
  });
});

describe('the cookie behind a TLS-terminating ingress (issue 31 item 7)', () => {
  let behind: TestApp;
  before(async () => {
    behind = await testApp({ console: { publicUrl: 'https://fn.example.com' } });
  });
  after(() => behind.app.close());
  // The ingress speaks https to the browser and plain http to the pod, under its own host name.
  const viaIngress = { host: 'fn.example.com', 'x-forwarded-proto': 'https' };
  it('is Secure when SLESS_PUBLIC_URL is https, though the request reached the pod over http', async () => {
    const link = await behind.app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { ...opened, ...viaIngress } });
    assert.equal(link.statusCode, 303);
    assert.match(String(link.headers['set-cookie']), /; Secure; /);
    const form = await behind.app.inject({ method: 'POST', url: '/funcs/_login', headers: { ...viaIngress, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://fn.example.com' }, payload: `token=${token}` });
    assert.equal(form.statusCode, 303);
    assert.match(String(form.headers['set-cookie']), /; Secure; /);
  });
  it('does not take X-Forwarded-Proto from the request on its own (a client can send any)', async () => {
    const res = await app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { ...opened, ...viaIngress } });
    assert.equal(res.statusCode, 303);
    assert.doesNotMatch(String(res.headers['set-cookie']), /Secure/);
  });
});

describe('logging in', () => {
  it('moves ?token= into an HttpOnly, SameSite=Strict cookie for /funcs and out of the URL', async () => {
    const res = await app.inject({ url: `/funcs/${NS}?token=${token}&x=1`, headers: opened });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}?x=1`);
    const set = String(res.headers['set-cookie']);
    assert.match(set, new RegExp(`^sless_console=${token.replace(/\./g, '\\.')}; Path=/funcs; HttpOnly; SameSite=Strict; Secure; Max-Age=\\d+$`));
    const maxAge = Number(/Max-Age=(\d+)/.exec(set)?.[1]);
    assert.ok(maxAge > 3500 && maxAge <= 3600, `the cookie lives as long as the token (1 h), not ${maxAge} s`);
  });
  it('leaves Secure off on plain http to a host that is not this machine (browsers would drop it)', async () => {
    const res = await app.inject({ url: `/funcs?token=${token}`, headers: { ...opened, host: 'sless.internal:8080' } });
    assert.doesNotMatch(String(res.headers['set-cookie']), /Secure/);
  });
  it('answers a script’s GET /funcs?token= with the caller’s functions, without a cookie or redirect', async () => {
    const res = await app.inject({ url: `/funcs?token=${token}` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.match(res.body, /^hello\tnodejs20\tReady\t/);
    const json = await app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { accept: 'application/json' } });
    assert.deepEqual(json.json().map((f: { name: string }) => f.name), ['hello', 'zeta']);
  });
  it('refuses a token that does not verify, and sets no cookie', async () => {
    const bad = await hs256Token({}, { secret: 'another-secret-of-enough-length-012345' });
    const res = await app.inject({ url: `/funcs?token=${bad}`, headers: opened });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.match(res.body, /signature does not verify/);
  });
  it('never writes the token of a ?token= link to the log', async () => {
    logs.length = 0;
    await app.inject({ url: `/funcs?token=${token}` });
    assert.ok(logs.some((l) => l.includes('token=[redacted]')), 'the request line is logged, redacted');
    assert.ok(!logs.some((l) => l.includes(token)));
  });
  it('sets no cookie for a ?token= link followed from another site (login CSRF, issue 31 item 11)', async () => {
    for (const site of [{ 'sec-fetch-site': 'cross-site', referer: 'https://evil.example/' }, { 'sec-fetch-site': 'same-site' }, {}]) {
      const res = await app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { ...browser, ...site } });
      assert.equal(res.headers['set-cookie'], undefined, `no cookie for ${JSON.stringify(site)}`);
      assert.equal(res.statusCode, 403);
      assert.match(res.body, /a link from another site cannot log you in/);
      assert.match(res.body, /<form class="login" method="post" action="\/funcs\/_login">/, 'the login form is offered instead');
      assert.ok(!res.body.includes(token), 'the token is not echoed into the page');
    }
    const sameOrigin = await app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { ...browser, 'sec-fetch-site': 'same-origin' } });
    assert.equal(sameOrigin.statusCode, 303);
    assert.match(String(sameOrigin.headers['set-cookie']), /^sless_console=/);
  });
  it('takes a pasted token from the login form and goes to the caller’s namespace', async () => {
    const res = await app.inject({ method: 'POST', url: '/funcs/_login', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' }, payload: `token=${token}&next=%2Ffuncs` });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}`);
    assert.match(String(res.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
  });
  it('refuses a login form posted from another site (login CSRF)', async () => {
    const res = await app.inject({ method: 'POST', url: '/funcs/_login', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' }, payload: `token=${token}` });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['set-cookie'], undefined);
  });
  it('sends a browser’s GET /funcs to the caller’s own namespace', async () => {
    const res = await app.inject({ url: '/funcs', headers: { ...cookie(), ...browser } });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}`);
  });
  it('logs out by clearing the cookie (a CSRF-checked form)', async () => {
    const res = await app.inject({ method: 'POST', url: '/funcs/_logout', headers: { ...cookie(), 'content-type': 'application/x-www-form-urlencoded' }, payload: `_csrf=${csrfTokenOf(token)}` });
    assert.equal(res.statusCode, 303);
    assert.match(String(res.headers['set-cookie']), /^sless_console=; .*Max-Age=0$/);
  });
  it('keeps one session per port: two consoles on one host (two sless dev) do not log each other out', async () => {
    const login = async (host: string) => {
      const res = await app.inject({ url: `/funcs/${NS}?token=${token}`, headers: { ...opened, host } });
      return /^([^=]+)=/.exec(String(res.headers['set-cookie']))?.[1] ?? '';
    };
    const [first, second] = [await login('localhost:8080'), await login('localhost:8081')];
    assert.notEqual(first, second, 'each port has its own cookie name');
    assert.equal(first, 'sless_console_8080');
    // The browser sends both cookies to both ports (cookies ignore ports); the other instance's token
    // does not verify here, and its cookie is neither used nor cleared.
    const both = { cookie: `${first}=${token}; ${second}=other.instances.token`, ...browser };
    const refused = await app.inject({ url: `/funcs/${NS}`, headers: { ...both, host: 'localhost:8081' } });
    assert.equal(refused.statusCode, 401);
    assert.match(String(refused.headers['set-cookie']), /^sless_console_8081=; .*Max-Age=0$/);
    assert.equal((await app.inject({ url: `/funcs/${NS}`, headers: { ...both, host: 'localhost:8080' } })).statusCode, 200);
  });
});

describe('GET /funcs/<namespace>', () => {
  it('answers curl with one tab-separated line per function: name, runtime, phase, URL', async () => {
    const res = await app.inject({ url: `/funcs/${NS}`, headers: { authorization: `Bearer ${token}`, accept: '*/*' } });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/plain/);
    assert.equal(res.body, `hello\tnodejs20\tReady\thttp://localhost/fn/${NS}/hello\nzeta\tnodejs20\tFailed\t-\n`);
  });
  it('answers JSON in the /v1 function shape, without the excluded functions', async () => {
    const res = await app.inject({ url: `/funcs/${NS}`, headers: { ...cookie(), accept: 'application/json' } });
    const v1 = await app.inject({ url: `/v1/namespaces/${NS}/functions`, headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(res.json(), (v1.json() as Array<{ name: string }>).filter((f) => !f.name.startsWith('internal-')));
  });
  it('renders the listing for browsers: phase with its reason, URL with a copy button, owner', async () => {
    const res = await app.inject({ url: `/funcs/${NS}`, headers: { ...cookie(), ...browser } });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /data-phase="Failed">Failed<\/span> <span class="reason">build failed: npm ERR! 404<\/span>/);
    assert.match(res.body, /<button type="button" class="copy" data-copy="http:\/\/localhost\/fn\/[^"]+\/hello" aria-label="Copy the URL of hello">/);
    assert.doesNotMatch(res.body, /internal-metrics/);
  });
  it('answers 304 to a refresh while the page is unchanged (its ETag)', async () => {
    const first = await app.inject({ url: `/funcs/${NS}`, headers: { ...cookie(), ...browser } });
    const etag = String(first.headers.etag);
    assert.match(etag, /^W\/"/);
    assert.equal((await app.inject({ url: `/funcs/${NS}`, headers: { ...cookie(), ...browser, 'if-none-match': etag } })).statusCode, 304);
  });
  it('renders 1,000 functions in well under a second', async () => {
    const many = await testApp();
    addManyFunctions(many.platform, NS, 1000);
    const get = () => many.app.inject({ url: `/funcs/${NS}`, headers: { ...cookie(), ...browser } });
    await get();
    const t0 = performance.now();
    const res = await get();
    const ms = performance.now() - t0;
    assert.equal(res.statusCode, 200);
    assert.equal(res.body.match(/<tr data-fn=/g)?.length, 1000);
    assert.ok(ms < 1000, `rendering took ${ms.toFixed(0)} ms (test/bench/console.bench.ts measures it: ~60 ms here)`);
    await many.app.close();
  });
  it('refuses another namespace with 403, as /v1 does, unless the token is an admin’s', async () => {
    const res = await app.inject({ url: '/funcs/sless-0000000000000000', headers: { ...cookie(), ...browser } });
    assert.equal(res.statusCode, 403);
    assert.match(res.body, /Not your namespace/);
    assert.match(res.body, new RegExp(`this token owns namespace ${NS}, not sless-0000000000000000`));
    const admin = await hs256Token({ sless_admin: true }, { sub: 'root' });
    assert.equal((await app.inject({ url: `/funcs/${NS}`, headers: cookie(admin) })).statusCode, 200);
  });
});

describe('a function’s pages', () => {
  it('shows the source: HTML escaped, binary files named only', async () => {
    const res = await app.inject({ url: `/funcs/${NS}/source/hello`, headers: { ...cookie(), ...browser } });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /exports\.handle = \(\) =&gt; &quot;&lt;b&gt;hi&lt;\/b&gt;&quot;;/);
    assert.match(res.body, /not shown: binary file/);
  });
  it('gives scripts the files as JSON (utf8 or base64) and curl as text', async () => {
    const json = await app.inject({ url: `/funcs/${NS}/source/hello`, headers: { ...cookie(), accept: 'application/json' } });
    assert.deepEqual(json.json(), [
      { path: 'handler.js', mode: '100644', encoding: 'utf8', content: 'exports.handle = () => "<b>hi</b>";\n' },
      { path: 'logo.bin', mode: '100644', encoding: 'base64', content: 'AAEC/w==' },
    ]);
    const text = await app.inject({ url: `/funcs/${NS}/source/hello`, headers: cookie() });
    assert.match(text.body, /^==> handler\.js <==\nexports\.handle/);
  });
  it('lists queue triggers with their lag, in-flight and dead-letter counts (a disabled one says so)', async () => {
    await platform.createTrigger(NS, { name: 'hello-queue-orders', type: 'queue', functionRef: 'hello', queue: { url: 'amqp://rabbit:5672/%2f', queue: 'orders' } });
    const made = await platform.getTrigger(NS, 'hello-queue-orders');
    platform.triggers.set(`${NS}/hello-queue-orders`, { ...made, queueStats: { lag: 42, inFlight: 7, deadLettered: 3 } });
    await platform.createTrigger(NS, { name: 'hello-queue-audit', type: 'queue', functionRef: 'hello', queue: { url: 'amqp://rabbit:5672/%2f', queue: 'audit' }, enabled: false });
    const res = await app.inject({ url: `/funcs/${NS}/functions/hello`, headers: { ...cookie(), ...browser } });
    assert.equal(res.statusCode, 200);
    const row = (name: string) => /<tr data-queue="[^"]+">[\s\S]*?<\/tr>/g.exec(res.body.slice(res.body.indexOf(`data-queue="${name}"`) - 20))?.[0] ?? '';
    const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
    assert.equal(text(row('hello-queue-orders')), 'hello-queue-orders orders amqp://rabbit:5672/%2f 42 7 3');
    assert.equal(text(row('hello-queue-audit')), 'hello-queue-audit audit amqp://rabbit:5672/%2f disabled');
    for (const name of ['hello-queue-orders', 'hello-queue-audit']) await platform.deleteTrigger(NS, name);
  });
  it('hides excluded functions entirely', async () => {
    assert.equal((await app.inject({ url: `/funcs/${NS}/functions/internal-metrics`, headers: cookie() })).statusCode, 404);
    assert.equal((await app.inject({ url: `/funcs/${NS}/source/internal-metrics`, headers: cookie() })).statusCode, 404);
  });
  it('says that git owns a git-managed function’s switches and where to change them', async () => {
    await platform.createFunction(NS, { name: 'from-git', runtime: 'python3.12' });
    platform.manageByGit(NS, 'from-git', 'team');
    platform.triggers.set(`${NS}/from-git-http`, { name: 'from-git-http', namespace: NS, type: 'http', functionRef: 'from-git', enabled: true, active: true, managedBy: 'git:team' });
    const repo = await platform.getRepository(NS, 'team');
    platform.repositories.set(`${NS}/team`, { ...repo, functions: [{ name: 'from-git', path: 'functions/from-git' }] });
    const res = await app.inject({ url: `/funcs/${NS}/functions/from-git`, headers: { ...cookie(), ...browser } });
    assert.match(res.body, /role="switch" aria-checked="true" aria-disabled="true"/);
    assert.match(res.body, /Git owns this switch: change <code>http\.enabled<\/code> in <code>functions\/from-git\/function\.yaml<\/code> \(repository <code>team<\/code>\)/);
  });
});

describe('actions are CSRF-safe', () => {
  const patch = (headers: Record<string, string>, enabled = false) =>
    app.inject({ method: 'PATCH', url: `/funcs/${NS}/triggers/hello-http`, headers: { 'content-type': 'application/json', ...headers }, payload: { enabled } });

  it('refuses a cookie-authorized PATCH without the page’s CSRF token', async () => {
    const res = await patch(cookie());
    assert.equal(res.statusCode, 403);
    assert.match(res.json().error, /CSRF token/);
    assert.equal((await platform.getTrigger(NS, 'hello-http')).enabled, true);
  });
  it('refuses it from another origin even with the right token', async () => {
    const res = await patch({ ...cookie(), 'x-csrf-token': csrfTokenOf(token), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    assert.equal(res.statusCode, 403);
  });
  it('switches a trigger with the CSRF token, and answers the /v1 trigger shape', async () => {
    const res = await patch({ ...cookie(), 'x-csrf-token': csrfTokenOf(token), origin: 'http://localhost:80' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().enabled, false);
    assert.equal((await platform.getTrigger(NS, 'hello-http')).enabled, false);
  });
  it('takes a bearer token without a CSRF token (no browser adds that header by itself)', async () => {
    const res = await patch({ authorization: `Bearer ${token}` }, true);
    assert.equal(res.statusCode, 200);
    assert.equal((await platform.getTrigger(NS, 'hello-http')).enabled, true);
  });
  it('takes the switch form with its _csrf field and sends the browser back', async () => {
    const form = (csrf: string) =>
      app.inject({
        method: 'POST',
        url: `/funcs/${NS}/triggers/hello-http`,
        headers: { ...cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `enabled=false&back=%2Ffuncs%2F${NS}%2Ffunctions%2Fhello&_csrf=${csrf}`,
      });
    assert.equal((await form('forged')).statusCode, 403);
    const res = await form(csrfTokenOf(token));
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}/functions/hello`);
    assert.equal((await platform.getTrigger(NS, 'hello-http')).enabled, false);
    await platform.setTriggerEnabled(NS, 'hello-http', true);
  });
  it('shows the revisions with "Roll back to this", rolls back with the form (CSRF-checked), shows the pinned banner, and undoes', async () => {
    const hash = (c: string) => `sha256:${c.repeat(64)}`;
    platform.revisions.set(`${NS}/hello`, [
      { revision: 1, codeHash: hash('a'), image: 'img@1', commit: '0123456789abcdef', liveFrom: '2026-12-06T10:00:00.000Z', liveUntil: '2026-12-06T11:00:00.000Z' },
      { revision: 2, codeHash: hash('b'), image: 'img@2', liveFrom: '2026-12-06T11:00:00.000Z' },
    ]);
    const page = async () => (await app.inject({ url: `/funcs/${NS}/functions/hello`, headers: { ...cookie(), ...browser } })).body;
    const before = await page();
    assert.match(before, /<h2 id="revisions-h">Revisions<\/h2>/);
    assert.match(before, /<tr data-revision="1">[\s\S]*?<code>0123456<\/code>[\s\S]*?aria-label="Roll back to this \(revision 1\)">Roll back to this<\/button>/);
    assert.doesNotMatch(before, /Roll back to this \(revision 2\)"/, 'the serving revision has no button');
    assert.doesNotMatch(before, /class="pinned"/);
    const form = (path: string, body: string) =>
      app.inject({ method: 'POST', url: `/funcs/${NS}/functions/hello/${path}`, headers: { ...cookie(), 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    assert.equal((await form('rollback', 'revision=1&_csrf=forged')).statusCode, 403);
    assert.equal((await platform.getFunction(NS, 'hello')).pinned, undefined);
    assert.equal((await form('rollback', `revision=x&_csrf=${csrfTokenOf(token)}`)).statusCode, 400);
    const res = await form('rollback', `revision=1&back=%2Ffuncs%2F${NS}%2Ffunctions%2Fhello&_csrf=${csrfTokenOf(token)}`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}/functions/hello`);
    assert.equal((await platform.getFunction(NS, 'hello')).pinned?.revision, 1);
    const pinned = await page();
    assert.match(pinned, /<div class="pinned" role="status">[\s\S]*Pinned to revision 1<\/strong> \(commit <code>0123456<\/code>\)[\s\S]*Undo the rollback<\/button>/);
    assert.equal((await form('rollback/undo', '_csrf=forged')).statusCode, 403);
    assert.equal((await form('rollback/undo', `_csrf=${csrfTokenOf(token)}`)).statusCode, 303);
    assert.equal((await platform.getFunction(NS, 'hello')).pinned, undefined);
    platform.revisions.delete(`${NS}/hello`);
  });
  it('asks for a sync with "sync now", and never for another namespace', async () => {
    const sync = (ns: string) =>
      app.inject({ method: 'POST', url: `/funcs/${ns}/repositories/team/sync`, headers: { ...cookie(), 'content-type': 'application/x-www-form-urlencoded' }, payload: `_csrf=${csrfTokenOf(token)}` });
    const res = await sync(NS);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/funcs/${NS}/repositories?synced=team`);
    assert.deepEqual(platform.syncRequests.at(-1), { namespace: NS, name: 'team', reason: 'console' });
    assert.equal((await sync('sless-0000000000000000')).statusCode, 403);
  });
  it('refuses a trigger of an excluded function as if it did not exist', async () => {
    const res = await patch({ authorization: `Bearer ${token}` });
    assert.equal(res.statusCode, 200);
    const hidden = await app.inject({ method: 'PATCH', url: `/funcs/${NS}/triggers/internal-metrics-http`, headers: { authorization: `Bearer ${token}` }, payload: { enabled: false } });
    assert.equal(hidden.statusCode, 404);
    await platform.setTriggerEnabled(NS, 'hello-http', true);
  });
});

describe('every page', () => {
  const pages = () => [`/funcs/${NS}`, `/funcs/${NS}/functions/hello`, `/funcs/${NS}/source/hello`, `/funcs/${NS}/repositories`, '/funcs'];
  it('carries a strict Content-Security-Policy and no inline script or style', async () => {
    for (const url of pages()) {
      const res = await app.inject({ url, headers: url === '/funcs' ? browser : { ...cookie(), ...browser } });
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/, url);
      assert.match(csp, /script-src 'self'(;|$)/, url);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, url);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['referrer-policy'], 'same-origin');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/, `${url} has an inline script`);
      assert.doesNotMatch(res.body, /\sstyle=|<style|\son[a-z]+=/, `${url} has inline style or an event handler attribute`);
    }
  });
  it('serves its one script and stylesheet with an ETag', async () => {
    const js = await app.inject({ url: '/funcs/_static/console.js' });
    assert.equal(js.statusCode, 200);
    assert.match(js.headers['content-type'] as string, /^text\/javascript/);
    const again = await app.inject({ url: '/funcs/_static/console.js', headers: { 'if-none-match': String(js.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal((await app.inject({ url: '/funcs/_static/other.js' })).statusCode, 404);
    assert.notEqual((await app.inject({ url: '/funcs/_static/../../package.json' })).statusCode, 200);
  });
});
