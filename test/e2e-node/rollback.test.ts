// Rollback on the real node (issue 33, docs/rollback.md), through a real `sless controller` and the
// real CLI (`node bin/sless.js rollback`): a bad deploy (a function that answers 500) rolled back
// serves the previous revision within 5 s with no build; the pin survives a controller restart and a
// new push (which builds but does not go live); `--undo` serves git's head from the image built
// meanwhile. Prints the times it measured (request → revision live, request → /fn answers it).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { readyAfterOneBuild } from './node-kit.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = 'name: hello\nruntime: nodejs20\nentrypoint: handler.handle\n';
const good = (version: string): string => `exports.handle = async () => ({ version: '${version}' });\n`;
const BAD = "exports.handle = async () => { throw new Error('bad deploy'); };\n";

/** An unsigned admin token: the kit's controllers run with SLESS_AUTH_INSECURE=1. */
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
const TOKEN = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'e2e-rollback', sless_admin: true, exp: Math.floor(Date.now() / 1000) + 7200 })}.`;

describe('rollback on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;

  function sless(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, SLESS_ENDPOINT: kit.url(), SLESS_API_TOKEN: TOKEN, SLESS_NAMESPACE: kit.ns };
    return new Promise((resolve) => {
      execFile(process.execPath, [path.join(root, 'bin/sless.js'), ...args], { env, cwd: root }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  /** What /fn answers: the version, or the status when it is not a 200. */
  async function answer(): Promise<string> {
    const res = await kit.callFn('hello');
    const text = await res.text();
    return res.status === 200 ? (JSON.parse(text) as { version: string }).version : `${res.status}`;
  }

  /** Polls /fn every 100 ms until it answers `want`; resolves with when it first did (ms since epoch). */
  async function firstAnswer(want: string, timeoutMs = 120_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = await answer().catch((e: unknown) => String(e));
      if (last === want) return Date.now();
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`/fn did not answer ${want} within ${timeoutMs} ms (last: ${last})`);
  }

  /** Waits until the controller recorded `count` revisions, the last one live. */
  async function recordedLive(count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const res = await fetch(`${kit.url()}/v1/namespaces/${kit.ns}/functions/hello/revisions`, { headers: { authorization: `Bearer ${TOKEN}` } });
      last = await res.text();
      const revs = res.status === 200 ? (JSON.parse(last) as Array<{ live_until: string | null }>) : [];
      if (revs.length >= count && revs.at(-1)?.live_until === null) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`revision ${count} was not recorded live within ${timeoutMs} ms (last: ${last})`);
  }

  before(async () => {
    kit = await setupNodeKit('e2e-rollback');
    await kit.startController();
    await kit.push({ 'functions/hello/function.yaml': manifest, 'functions/hello/handler.js': good('v1') }, 'v1');
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it('a bad deploy (500) rolled back with `sless rollback` serves the previous revision within 5 s, with no build', async (t) => {
    await readyAfterOneBuild(kit, 'hello');
    assert.equal(await answer(), 'v1');
    await kit.push({ 'functions/hello/handler.js': BAD }, 'bad deploy');
    assert.equal((await kit.webhook('fns')).status, 202);
    await firstAnswer('500', 240_000);
    const builds = (await kit.buildJobs('hello')).length;
    assert.equal(builds, 2);
    // /fn serves a new pod as soon as it answers (it probes pods itself), before the rollout ends and the
    // controller records the version live; "the revision before the live one" needs that record.
    await recordedLive(2);

    // /fn is watched from before the command starts: the first v1 answer after it.
    const started = Date.now();
    const served = firstAnswer('v1', 60_000);
    const r = await sless(['rollback', 'hello']);
    assert.equal(r.code, 0, r.stderr);
    const m = /^hello: serving revision 1 \(commit ([0-9a-f]{7})\) after ([0-9.]+) s; pinned/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const servedAt = await served;
    const cliSeconds = Number(m[2]);
    t.diagnostic(`rollback: request → revision 1 live ${cliSeconds} s (the command's own measure); command start → /fn answers v1 ${((servedAt - started) / 1000).toFixed(1)} s`);
    assert.ok(cliSeconds < 5, `revision 1 went live ${cliSeconds} s after the request`);
    // Once live, every call is answered by revision 1.
    for (let i = 0; i < 10; i++) assert.equal(await answer(), 'v1');
    assert.equal((await kit.buildJobs('hello')).length, builds, 'no build for a rollback');
    const fn = await kit.getFunction('hello');
    assert.equal(fn?.status?.conditions?.find((c) => c.type === 'Pinned')?.message, `serving revision 1 (commit ${m[1]}); git is ahead: push a fix or undo the rollback`);
  });

  it('stays pinned across a controller restart and a push, which builds but does not go live', async () => {
    await kit.controllers[0]?.stop();
    await kit.startController();
    assert.equal(await answer(), 'v1');
    await kit.push({ 'functions/hello/handler.js': good('v3') }, 'the fix');
    assert.equal((await kit.webhook('fns')).status, 202);
    const before = await kit.getFunction('hello');
    await kit.waitFunction('hello', (f) => f.status?.imageRef !== before?.status?.imageRef && (f.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));
    assert.equal((await kit.buildJobs('hello')).length, 3, 'the fix was built');
    for (let i = 0; i < 5; i++) assert.equal(await answer(), 'v1');
    const listed = await sless(['get', 'functions', 'hello', '-o', 'json']);
    assert.equal((JSON.parse(listed.stdout) as { pinned: { revision: number } | null }).pinned?.revision, 1);
    const image = (await kit.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' })).spec?.template.spec?.containers[0]?.image;
    const revs = JSON.parse((await sless(['get', 'revisions', 'hello', '-o', 'json'])).stdout) as Array<{ revision: number; image: string }>;
    assert.equal(image, revs.find((r) => r.revision === 1)?.image, 'the Deployment runs revision 1');
  });

  it('`sless rollback --undo` serves git’s head (the fix built while pinned) with no build', async (t) => {
    const started = Date.now();
    const served = firstAnswer('v3', 60_000);
    const r = await sless(['rollback', 'hello', '--undo']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^hello: rollback undone; serving its own version, revision 3 \(commit [0-9a-f]{7}\), after [0-9.]+ s\n$/);
    t.diagnostic(`undo: ${r.stdout.trim()}; command start → /fn answers v3 ${(((await served) - started) / 1000).toFixed(1)} s`);
    assert.equal((await kit.buildJobs('hello')).length, 3, 'no build for the undo');
    const fn = await kit.getFunction('hello');
    assert.equal(fn?.status?.conditions?.find((c) => c.type === 'Pinned'), undefined);
  });
});
