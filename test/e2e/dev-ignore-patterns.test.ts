// `sless dev` with ignore patterns that made the matching library backtrack for hours (issue 31 item
// 2: `**/` 16 times against a path 30 folders deep): a git sync with such a .slessignore and a zip
// upload through /v1 with one both finish in seconds while /healthz keeps answering.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeZip } from '../../src/http/write-zip.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const HOSTILE = `# hostile\n${'**/'.repeat(16)}x\n`;
const DEEP = `${Array.from({ length: 30 }, (_, i) => `d${i}`).join('/')}/deep.js`;
let dev: DevProcess;
let started = 0;

/** Polls /healthz every 50 ms until stopped; the slowest answer. */
function probeHealth(url: string): { stop: () => Promise<number> } {
  let on = true;
  let slowest = 0;
  const loop = (async () => {
    while (on) {
      const t = Date.now();
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      slowest = Math.max(slowest, Date.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return slowest;
    },
  };
}

before(async () => {
  const repo = await createRepo(sharedGitServer(), 'dev-ignore');
  const clone = await WorkClone.create(repo);
  await clone.write({ 'slow/function.yaml': 'runtime: nodejs20\n', 'slow/index.js': 'exports.handle = async () => 1;\n', 'slow/.slessignore': HOSTILE, [`slow/${DEEP}`]: '1;\n' });
  await clone.commitAndPush('hostile .slessignore');
  await clone.dispose();
  started = Date.now();
  dev = await startDevProcess({ repo: repo.url });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
});

test('a git sync of a function with the hostile .slessignore finishes in seconds', async () => {
  const probe = probeHealth(dev.url);
  const headers = { authorization: `Bearer ${await dev.adminToken()}` };
  const repo = await eventually(async () => {
    const r = (await (await fetch(`${dev.url}/v1/namespaces/dev/repositories/local`, { headers })).json()) as { revision?: string; functions?: Array<{ name: string; code_hash?: string; error?: string }> };
    return r.functions?.some((f) => f.name === 'slow') ? r : undefined;
  }, 'the repository to be synced', 60_000);
  const slowest = await probe.stop();
  const ms = Date.now() - started;
  console.log(`synced in ${ms} ms (dev start included); slowest /healthz ${slowest} ms`);
  assert.deepEqual(repo.functions?.find((f) => f.name === 'slow')?.error, undefined);
  // dev start included: 6-14 s at load average 15-20; before, the sync never finished.
  assert.ok(ms < 60_000, `the sync took ${ms} ms`);
  assert.ok(slowest < 1000, `/healthz took ${slowest} ms`);
});

test('a zip upload through /v1 with the hostile .slessignore is answered in seconds, /healthz answering', async () => {
  const headers = { authorization: `Bearer ${await dev.adminToken()}` };
  const created = await fetch(`${dev.url}/v1/namespaces/dev/functions`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'up', runtime: 'nodejs20' }) });
  assert.ok(created.status < 300, `create answered ${created.status}: ${await created.text()}`);
  const zip = writeZip(
    [
      ['index.js', 'exports.handle = async () => 1;\n'],
      ['.slessignore', HOSTILE],
      [DEEP, '1;\n'],
    ].map(([path, content]) => ({ path: path!, mode: '100644' as const, content: Buffer.from(content!) })),
  );
  const probe = probeHealth(dev.url);
  const t = Date.now();
  const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/up/upload`, { method: 'POST', headers: { ...headers, 'content-type': 'application/zip' }, body: zip, signal: AbortSignal.timeout(30_000) });
  const ms = Date.now() - t;
  const slowest = await probe.stop();
  console.log(`upload answered ${res.status} in ${ms} ms; slowest /healthz ${slowest} ms`);
  assert.equal(res.status, 200, await res.text());
  assert.ok(ms < 5000, `the upload took ${ms} ms`);
  assert.ok(slowest < 1000, `/healthz took ${slowest} ms`);
});
