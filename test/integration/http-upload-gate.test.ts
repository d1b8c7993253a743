// Uploads wait their turn: past the per-namespace or per-process cap an upload gets 429 with a
// Retry-After before its body is read; a slot comes back when the upload ends, however it ends.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, it } from 'node:test';
import { hs256Token, listen, testApp } from '../helpers/http-test-kit.ts';

describe('upload concurrency caps', async () => {
  const { app } = await testApp({ limits: { uploads: { perProcess: 2, perNamespace: 1, retryAfterSec: 3 } } });
  const base = await listen(app);
  const token = await hs256Token({ sless_admin: true });
  after(() => app.close());

  /** An upload whose body is still coming: it holds its slot until `finish` ends it. */
  const slowUpload = (ns: string) => {
    const req = request(`${base}/v1/namespaces/${ns}/functions/f/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip', 'transfer-encoding': 'chunked' },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.on('error', reject);
    });
    req.write('PK');
    return { answered, finish: () => req.end() };
  };
  const upload = (ns: string) =>
    fetch(`${base}/v1/namespaces/${ns}/functions/f/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip' },
      body: Buffer.from('not a zip'),
    });

  it('answers 429 + Retry-After past the namespace cap and the process cap, and frees slots when uploads end', async () => {
    const a = slowUpload('team-a');
    await new Promise((r) => setTimeout(r, 200));
    const sameNs = await upload('team-a');
    assert.equal(sameNs.status, 429);
    assert.equal(sameNs.headers.get('retry-after'), '3');
    assert.match(((await sameNs.json()) as { error: string }).error, /namespace team-a/);
    const b = slowUpload('team-b');
    await new Promise((r) => setTimeout(r, 200));
    const third = await upload('team-c');
    assert.equal(third.status, 429);
    assert.match(((await third.json()) as { error: string }).error, /at most 2 at a time/);
    a.finish();
    b.finish();
    assert.notEqual(await a.answered, 429);
    await b.answered;
    const later = await upload('team-c');
    assert.notEqual(later.status, 429, 'slots are back');
  });

  it('never takes a slot for a request without a valid token', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/v1/namespaces/team-d/functions/f/upload`, { method: 'POST', body: 'x' });
      assert.equal(res.status, 401);
    }
    assert.notEqual((await upload('team-d')).status, 429);
  });
});
