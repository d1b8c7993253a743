// S3 going away and coming back: a SeaweedFS of this file's own, stopped and started again on the
// same port and data. The store must fail fast with `Unavailable` and work again afterwards.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { isArtifactStoreError } from '../../src/build/artifact-store.ts';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';

describe('S3ArtifactStore during an S3 outage', () => {
  let server: S3Server;
  let store: S3ArtifactStore;

  before(async () => {
    server = await startS3Server({ bucket: 'outage' });
    store = new S3ArtifactStore({
      endpoint: server.endpoint,
      region: server.region,
      bucket: server.bucket,
      credentials: { accessKeyId: server.accessKey, secretAccessKey: server.secretKey },
      maxAttempts: 2,
      connectTimeoutMs: 500,
      idleTimeoutMs: 2_000,
    });
    await store.init();
  });
  after(async () => {
    store?.close();
    await server?.dispose();
  });

  it('fails quickly with Unavailable while S3 is down, and works again when it is back', async () => {
    await store.put('contexts/before.tar.gz', Readable.from([Buffer.from('kept across the outage')]));

    await server.stop();
    for (const attempt of [
      () => store.has('contexts/before.tar.gz'),
      () => store.get('contexts/before.tar.gz'),
      () => store.put('contexts/during.tar.gz', Readable.from([Buffer.from('x')])),
      () => store.list('contexts/'),
      () => store.init(),
    ]) {
      const t0 = Date.now();
      await assert.rejects(attempt(), (err: unknown) => {
        assert.ok(isArtifactStoreError(err, 'Unavailable'), String(err));
        assert.match(err.message, new RegExp(`s3://outage at ${server.endpoint}: the S3 server is unreachable`));
        assert.match(err.message, /ECONNREFUSED/);
        return true;
      });
      const ms = Date.now() - t0;
      assert.ok(ms < 3_000, `an unreachable S3 took ${ms} ms to report`);
    }

    await server.start();
    assert.equal(await store.has('contexts/before.tar.gz'), true);
    assert.equal((await buffer(await store.get('contexts/before.tar.gz'))).toString(), 'kept across the outage');
    await store.put('contexts/after.tar.gz', Readable.from([Buffer.from('after')]));
    assert.deepEqual(await store.list('contexts/'), ['contexts/after.tar.gz', 'contexts/before.tar.gz']);
  });

  it('gives up on a server that accepts connections but never answers, after the idle timeout', async () => {
    const sockets: Socket[] = [];
    const blackHole = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}`;
    const hung = new S3ArtifactStore({
      endpoint, region: 'us-east-1', bucket: 'b', credentials: { accessKeyId: 'k', secretAccessKey: 's' },
      maxAttempts: 1, idleTimeoutMs: 300,
    });
    try {
      const t0 = Date.now();
      await assert.rejects(hung.get('contexts/x.tar.gz'), (err: unknown) => {
        assert.ok(isArtifactStoreError(err, 'Unavailable'), String(err));
        assert.match(err.message, /TimeoutError/);
        return true;
      });
      assert.ok(Date.now() - t0 < 2_000, `took ${Date.now() - t0} ms`);
    } finally {
      hung.close();
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });
});
