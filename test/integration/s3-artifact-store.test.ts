// S3ArtifactStore against the real SeaweedFS started by test/services/s3.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, describe, it } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { isArtifactStoreError } from '../../src/build/artifact-store.ts';
import { buildContextTar, contextKey, type ContextFile } from '../../src/build/context-tar.ts';
import { S3ArtifactStore, type S3ArtifactStoreOptions } from '../../src/build/s3-artifact-store.ts';
import { artifactStoreContract } from '../helpers/artifact-store-contract.ts';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this file through \`npm test\` with the s3 service (SLESS_TEST_SERVICES=s3)`);
  return v;
}
const endpoint = need('SLESS_TEST_S3_ENDPOINT');
const accessKeyId = need('SLESS_TEST_S3_ACCESS_KEY');
const secretAccessKey = need('SLESS_TEST_S3_SECRET_KEY');
const region = need('SLESS_TEST_S3_REGION');
const bucket = `sless-it-${randomBytes(4).toString('hex')}`;

const stores: S3ArtifactStore[] = [];
after(() => stores.forEach((s) => s.close()));

function store(overrides: Partial<S3ArtifactStoreOptions> = {}): S3ArtifactStore {
  const s = new S3ArtifactStore({
    endpoint, region, bucket, credentials: { accessKeyId, secretAccessKey }, createBucket: true, ...overrides,
  });
  stores.push(s);
  return s;
}

async function ready(overrides: Partial<S3ArtifactStoreOptions> = {}): Promise<S3ArtifactStore> {
  const s = store(overrides);
  await s.init();
  return s;
}

describe('S3ArtifactStore on SeaweedFS', () => {
  artifactStoreContract(() => ready());

  it('stores 12,000 bytes as 12,000 bytes server-side (no aws-chunked framing in the object)', async () => {
    const s = await ready();
    await s.put('framing/12000.bin', Readable.from([randomBytes(12_000)]));
    const raw = new S3Client({
      endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
    });
    try {
      const head = await raw.send(new HeadObjectCommand({ Bucket: bucket, Key: 'framing/12000.bin' }));
      assert.equal(head.ContentLength, 12_000);
    } finally {
      raw.destroy();
    }
  });

  it('skips what is already there: a deterministic context is uploaded once under its content key', async () => {
    const s = await ready();
    const files: ContextFile[] = [
      { path: 'handler.py', mode: '100644', content: Buffer.from('def handle(event, ctx):\n    return "ok"\n') },
      { path: 'run.sh', mode: '100755', content: Buffer.from('#!/bin/sh\n') },
    ];
    const generated = [{ path: 'Dockerfile', content: 'FROM python:3.12-slim\nCOPY function/ /app/\n' }];
    const key = contextKey(`sha256:${'a'.repeat(64)}|python3.12|python:3.12-slim`, generated);
    let uploads = 0;
    const publish = async () => {
      if (await s.has(key)) return;
      uploads++;
      await s.put(key, buildContextTar(files, generated), { contentType: 'application/gzip' });
    };
    await publish();
    await publish();
    assert.equal(uploads, 1);
    const stored = await buffer(await s.get(key));
    assert.deepEqual(stored, await buffer(buildContextTar([...files].reverse(), generated)));
  });

  it('says clearly when the bucket is missing and it may not create it', async () => {
    const s = store({ bucket: `sless-missing-${randomBytes(4).toString('hex')}`, createBucket: false });
    await assert.rejects(s.init(), (err: unknown) => {
      assert.ok(isArtifactStoreError(err, 'Invalid'), String(err));
      assert.match(err.message, /the bucket for s3:\/\/sless-missing-[0-9a-f]+ at http:\/\/127\.0\.0\.1:\d+ does not exist/);
      return true;
    });
  });

  it('rejects wrong credentials with a Denied error that names the place but no secret', async () => {
    await ready();
    const wrongSecret = `wrong-${randomBytes(8).toString('hex')}`;
    const s = store({ credentials: { accessKeyId, secretAccessKey: wrongSecret }, maxAttempts: 1 });
    await assert.rejects(s.put('denied/x', Readable.from([Buffer.from('x')])), (err: unknown) => {
      assert.ok(isArtifactStoreError(err, 'Denied'), String(err));
      assert.match(err.message, new RegExp(`cannot upload "denied/x" in s3://${bucket} at ${endpoint}: access denied`));
      assert.match(err.message, /SignatureDoesNotMatch/);
      assert.ok(!err.message.includes(wrongSecret) && !err.message.includes(secretAccessKey));
      return true;
    });
    const unknownKey = store({ credentials: { accessKeyId: 'NOSUCHKEY0000000', secretAccessKey }, maxAttempts: 1 });
    await assert.rejects(unknownKey.has('denied/x'), (err: unknown) => isArtifactStoreError(err, 'Denied'));
  });

  it('keeps credentials given in the endpoint URL out of its location and errors', async () => {
    const s = store({ endpoint: endpoint.replace('http://', 'http://user:hunter2@') });
    assert.equal(s.location, `s3://${bucket} at ${endpoint}`);
  });
});
