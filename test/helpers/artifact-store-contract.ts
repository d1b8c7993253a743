// The behaviour every ArtifactStore must show, run against each implementation (a directory, a real
// SeaweedFS). `make` gives a fresh, initialised store per call; keys are made unique per run.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { it } from 'node:test';
import { isArtifactStoreError, type ArtifactStore } from '../../src/build/artifact-store.ts';

/** A stream that yields `total` pseudo-random bytes in uneven chunks and never says its length. */
export function unknownLengthStream(total: number, seed = 1): { stream: Readable; sha256: string } {
  const bytes = Buffer.alloc(total);
  let x = seed;
  for (let i = 0; i < total; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const chunks = function* () {
    let off = 0;
    let n = 1;
    while (off < total) {
      const size = Math.min(((n++ * 7919) % 200_000) + 1, total - off);
      yield bytes.subarray(off, off + size);
      off += size;
    }
  };
  return { stream: Readable.from(chunks(), { objectMode: false }), sha256 };
}

export function sha256Of(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

export function artifactStoreContract(make: () => Promise<ArtifactStore>): void {
  const run = randomBytes(4).toString('hex');
  const key = (name: string) => `contract-${run}/${name}`;

  it('stores exactly the bytes it was given (12,000 bytes stay 12,000 bytes)', async () => {
    const store = await make();
    const body = randomBytes(12_000);
    assert.equal(await store.has(key('exact.bin')), false);
    await store.put(key('exact.bin'), Readable.from([body]));
    assert.equal(await store.has(key('exact.bin')), true);
    const back = await buffer(await store.get(key('exact.bin')));
    assert.equal(back.length, 12_000);
    assert.ok(back.equals(body));
  });

  it('stores an empty object', async () => {
    const store = await make();
    await store.put(key('empty'), Readable.from([]));
    assert.equal((await buffer(await store.get(key('empty')))).length, 0);
  });

  it('replaces an object written again under the same key', async () => {
    const store = await make();
    await store.put(key('twice'), Readable.from([Buffer.from('first')]));
    await store.put(key('twice'), Readable.from([Buffer.from('second')]));
    assert.equal((await buffer(await store.get(key('twice')))).toString(), 'second');
  });

  it('streams a body of several MB whose length is not known in advance', async () => {
    const store = await make();
    const { stream, sha256 } = unknownLengthStream(12 * 1024 * 1024 + 123);
    await store.put(key('big.tar.gz'), stream);
    const back = await buffer(await store.get(key('big.tar.gz')));
    assert.equal(back.length, 12 * 1024 * 1024 + 123);
    assert.equal(sha256Of(back), sha256);
  });

  it('says NotFound for a missing key on get, and deleting a missing key is fine', async () => {
    const store = await make();
    await assert.rejects(store.get(key('missing')), (err: unknown) => {
      assert.ok(isArtifactStoreError(err, 'NotFound'), String(err));
      assert.match(err.message, /missing/);
      return true;
    });
    await store.delete(key('missing'));
  });

  it('deletes, and lists keys under a prefix in sorted order', async () => {
    const store = await make();
    for (const name of ['list/b', 'list/a', 'list/sub/c', 'listing-other']) {
      await store.put(key(name), Readable.from([Buffer.from(name)]));
    }
    assert.deepEqual(await store.list(key('list/')), [key('list/a'), key('list/b'), key('list/sub/c')]);
    assert.deepEqual(await store.list(key('list')), [key('list/a'), key('list/b'), key('list/sub/c'), key('listing-other')]);
    await store.delete(key('list/a'));
    assert.equal(await store.has(key('list/a')), false);
    assert.deepEqual(await store.list(key('list/')), [key('list/b'), key('list/sub/c')]);
    assert.deepEqual(await store.list(key('nothing-here/')), []);
  });

  it('refuses keys that are not clean relative paths', async () => {
    const store = await make();
    for (const bad of ['', '/abs', 'a/../b', 'a//b', './a']) {
      await assert.rejects(store.has(bad), (err: unknown) => isArtifactStoreError(err, 'Invalid'), bad);
    }
  });

  it('leaves no object behind when the body fails mid-stream', async () => {
    const store = await make();
    async function* failing() {
      yield randomBytes(1000);
      throw new Error('tar stream broke');
    }
    await assert.rejects(store.put(key('broken'), Readable.from(failing())));
    assert.equal(await store.has(key('broken')), false);
    assert.deepEqual(await store.list(key('broken')), []);
  });
}
