// Uploads cannot exhaust the machine: four concurrent amplifying uploads (~240 KB zips that inflate
// to 240 MB each) keep the RSS of a real `sless dev` under 1 GB, and, as entries stream to disk
// while they inflate, grow it by well under one inflated file (unpacked in memory they took it from
// ~120 MB to 629 MB); past the cap they get 429 with a Retry-After, no unpacked upload is left
// behind, and a prepared folder nothing uses any more is deleted.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeZip } from '../../src/http/write-zip.ts';
import type { CodeFile } from '../../src/platform/types.ts';
import { eventually, startDevProcess } from './dev-harness.ts';

const INFLATED = 240 * 1024 * 1024;
const GB = 1024 * 1024 * 1024;
const scratch = await mkdtemp(path.join(os.tmpdir(), 'sless-upload-pressure-'));
after(() => rm(scratch, { recursive: true, force: true }));

const handler = (text: string): CodeFile => ({ path: 'handler.js', mode: '100644', content: Buffer.from(`exports.handle = async () => ${JSON.stringify(text)};\n`) });

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

test('four concurrent amplifying uploads stream to disk: sless dev stays far under 1 GB; unused folders go', { timeout: 300_000 }, async () => {
  const zeros: CodeFile = { path: 'zeros.bin', mode: '100644', content: Buffer.alloc(INFLATED) };
  // Different code per namespace, so each gets a prepared folder of its own.
  const bombOf = (ns: string) => writeZip([handler(`bomb ${ns}`), zeros]);
  assert.ok(bombOf('x').length < 400 * 1024, `the zip is ${bombOf('x').length} bytes`);
  const dev = await startDevProcess({ repo: scratch, path: '' });
  try {
    const auth = { authorization: `Bearer ${await dev.adminToken()}` };
    const namespaces = ['up-a', 'up-b', 'up-c', 'up-d'];
    for (const ns of namespaces) {
      const res = await fetch(`${dev.url}/v1/namespaces/${ns}/functions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bomb', runtime: 'nodejs20' }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const before = await rssOf(dev.pid);
    let peak = before;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssOf(dev.pid));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const bombs = new Map(namespaces.map((ns) => [ns, bombOf(ns)]));
    const answers = await Promise.all(
      namespaces.map(async (ns) => {
        const res = await fetch(`${dev.url}/v1/namespaces/${ns}/functions/bomb/upload`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/zip' },
          body: bombs.get(ns),
        });
        return { ns, status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
      }),
    );
    await new Promise((r) => setTimeout(r, 2000));
    sampling = false;
    await sampler;
    const after = await rssOf(dev.pid);
    console.log(`sless dev RSS: before ${(before / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB, after ${(after / 2 ** 20).toFixed(0)} MB; answers ${answers.map((a) => a.status).join(' ')}`);
    assert.ok(peak < GB, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);
    assert.ok(peak - before < 200 * 2 ** 20, `RSS grew by ${((peak - before) / 2 ** 20).toFixed(0)} MB: an upload is held in memory`);
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    assert.ok(accepted.length >= 1, JSON.stringify(answers));
    assert.equal(accepted.length + refused.length, 4, JSON.stringify(answers));
    for (const r of refused) assert.ok(Number(r.retryAfter) > 0, 'a 429 says when to retry');

    // New code for one of them: the old version's 480 MB folder stays while it is a kept revision (a
    // rollback serves it with no build, docs/rollback.md); removing the function removes both folders.
    const first = accepted[0]?.ns as string;
    const builds = path.join(dev.dataDir, 'builds');
    const folders = async () => (await readdir(builds)).filter((n) => !n.startsWith('.'));
    await eventually(async () => (await fetch(`${dev.url}/fn/${first}/bomb`)).status === 200 || undefined, 'the uploaded function to serve', 120_000);
    const withBomb = await folders();
    const uploads = path.join(dev.dataDir, 'uploads');
    await eventually(async () => (await readdir(uploads).catch(() => [])).length === 0 || undefined, 'unpacked uploads to be moved into their build or removed', 30_000);
    const res = await fetch(`${dev.url}/v1/namespaces/${first}/functions/bomb/upload`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/zip' },
      body: writeZip([handler('small')]),
    });
    assert.equal(res.status, 200, await res.text());
    await eventually(async () => (await (await fetch(`${dev.url}/fn/${first}/bomb`)).text()) === 'small' || undefined, 'the new code to serve', 60_000);
    const withBoth = await eventually(async () => {
      const now = await folders();
      return now.length === withBomb.length + 1 ? now : undefined;
    }, `the new version prepared beside the kept revision (had ${withBomb.join(', ')})`);
    assert.ok(withBomb.every((n) => withBoth.includes(n)), 'the replaced version is kept as a revision');
    const del = await fetch(`${dev.url}/v1/namespaces/${first}/functions/bomb`, { method: 'DELETE', headers: auth });
    assert.ok(del.status === 204 || del.status === 200, `delete answered ${del.status}`);
    await eventually(
      async () => {
        const now = await folders();
        return now.length === withBomb.length - 1 ? now : undefined;
      },
      `the removed function's prepared folders to be deleted (had ${withBoth.join(', ')})`,
      60_000,
    );
  } finally {
    await dev.dispose();
  }
});
