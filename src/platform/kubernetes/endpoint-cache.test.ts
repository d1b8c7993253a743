import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../types.ts';
import { EndpointCache } from './endpoint-cache.ts';

const READY: Endpoint = { kind: 'ready', baseUrl: 'http://svc', timeoutSec: 30 };

function harness(answers: Array<Endpoint | Error>) {
  let t = 0;
  const calls: string[] = [];
  const cache = new EndpointCache({
    readyTtlMs: 2000,
    otherTtlMs: 500,
    staleMs: 10_000,
    now: () => t,
    load: async (ns, name) => {
      calls.push(`${ns}/${name}`);
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { cache, calls, advance: (ms: number) => (t += ms) };
}

describe('EndpointCache', () => {
  it('reuses a ready answer for its TTL, then asks again', async () => {
    const h = harness([READY, { kind: 'disabled' }]);
    assert.deepEqual(await h.cache.get('ns', 'a'), READY);
    h.advance(1999);
    assert.deepEqual(await h.cache.get('ns', 'a'), READY);
    h.advance(1);
    assert.deepEqual(await h.cache.get('ns', 'a'), { kind: 'disabled' });
    assert.equal(h.calls.length, 2);
  });

  it('keeps "not there yet" answers for a shorter time', async () => {
    const h = harness([{ kind: 'not-ready', reason: 'Building' }, READY]);
    assert.equal((await h.cache.get('ns', 'a')).kind, 'not-ready');
    h.advance(500);
    assert.deepEqual(await h.cache.get('ns', 'a'), READY);
  });

  it('shares one load between concurrent lookups of the same function', async () => {
    const h = harness([READY, READY]);
    const all = await Promise.all([h.cache.get('ns', 'a'), h.cache.get('ns', 'a'), h.cache.get('ns', 'a')]);
    assert.ok(all.every((e) => e.kind === 'ready'));
    assert.deepEqual(h.calls, ['ns/a']);
  });

  it('serves the last answer while refreshes fail, up to staleMs, then fails', async () => {
    const h = harness([READY, new Error('apiserver down'), new Error('apiserver down')]);
    await h.cache.get('ns', 'a');
    h.advance(5000);
    assert.deepEqual(await h.cache.get('ns', 'a'), READY);
    h.advance(6000);
    await assert.rejects(h.cache.get('ns', 'a'), /apiserver down/);
  });

  it('forgets an answer on invalidate', async () => {
    const h = harness([READY, { kind: 'not-found' }]);
    await h.cache.get('ns', 'a');
    h.cache.invalidate('ns', 'a');
    assert.deepEqual(await h.cache.get('ns', 'a'), { kind: 'not-found' });
  });
});
