// Zip uploads (raw and multipart) and /source zip downloads; hostile zips get 4xx with clear errors.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { readZip } from '../../src/http/read-zip.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import type { CodeFile } from '../../src/platform/types.ts';
import { hs256Token, listen, NS, testApp } from '../helpers/http-test-kit.ts';

const file = (path: string, content: string | Buffer, mode: CodeFile['mode'] = '100644'): CodeFile => ({
  path,
  mode,
  content: Buffer.isBuffer(content) ? content : Buffer.from(content),
});

describe('zip upload and download', async () => {
  const { app, platform } = await testApp({ limits: { zip: { compressedBytes: 1024 * 1024, uncompressedBytes: 4 * 1024 * 1024, entries: 50 } } });
  const base = await listen(app);
  let auth: Record<string, string> = {};
  const url = (name: string, what: string) => `/v1/namespaces/${NS}/functions/${name}/${what}`;
  const upload = (zip: Buffer, name = 'code') =>
    app.inject({ method: 'POST', url: url(name, 'upload'), headers: { ...auth, 'content-type': 'application/zip' }, payload: zip });
  before(async () => {
    auth = { authorization: `Bearer ${await hs256Token()}` };
    await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}/functions`, headers: auth, payload: { name: 'code', runtime: 'nodejs20' } });
  });
  after(() => app.close());

  it('takes a raw zip, keeps modes and symlinks, and gives the same files back from /source', async () => {
    const files = [file('handler.js', 'exports.handle = () => "hi"'), file('bin/run.sh', '#!/bin/sh\necho hi\n', '100755'), file('lib/current', '../handler.js', '120000')];
    const res = await upload(writeZip(files));
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().phase, 'Building');
    assert.deepEqual(
      platform.sources.get(`${NS}/code`)?.map((f) => [f.path, f.mode, f.content.toString()]).sort(),
      files.map((f) => [f.path, f.mode, f.content.toString()]).sort(),
    );
    const source = await app.inject({ url: url('code', 'source'), headers: { ...auth, accept: 'application/zip' } });
    assert.equal(source.statusCode, 200);
    assert.equal(source.headers['content-type'], 'application/zip');
    const back = await readZip(source.rawPayload);
    assert.deepEqual(
      back.map((f) => [f.path, f.mode, f.content.toString()]).sort(),
      files.map((f) => [f.path, f.mode, f.content.toString()]).sort(),
    );
  });

  it('refuses a zip whose file sits 200 folders deep (400, TreeTooDeep naming the limit), before writing it', async () => {
    const res = await upload(writeZip([file(`${'d/'.repeat(200)}deep.js`, '1;'), file('index.js', '1;')]));
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().error, /\(TreeTooDeep\): .* more than the 128 folders a path may nest \(SLESS_MAX_TREE_DEPTH\)/);
  });

  it('takes a zip in multipart field "file"', async () => {
    const form = new FormData();
    form.append('file', new Blob([writeZip([file('handler.py', 'def handle(e): return e')])]), 'code.zip');
    const res = await fetch(`${base}${url('code', 'upload')}`, { method: 'POST', headers: auth, body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(platform.sources.get(`${NS}/code`)?.map((f) => f.path), ['handler.py']);
    const wrongField = new FormData();
    wrongField.append('zip', new Blob([writeZip([file('a', 'b')])]), 'code.zip');
    const bad = await fetch(`${base}${url('code', 'upload')}`, { method: 'POST', headers: auth, body: wrongField });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /field "file"/);
  });

  it('strips one folder that holds every file ("compress this folder")', async () => {
    await upload(writeZip([file('hello/handler.js', 'x'), file('hello/lib/a.js', 'y')]));
    assert.deepEqual(platform.sources.get(`${NS}/code`)?.map((f) => f.path), ['handler.js', 'lib/a.js']);
  });

  const hostile: Array<[string, () => Buffer, number, RegExp]> = [
    ['a ".." path (zip-slip)', () => writeZip([file('../../etc/cron.d/x', 'boom')]), 400, /contains "\.\."/],
    ['an absolute path', () => writeZip([file('/etc/passwd', 'root')]), 400, /absolute path/],
    ['a symlink that escapes', () => writeZip([file('handler.js', 'x'), file('link', '../../../etc/shadow', '120000')]), 400, /points outside/],
    ['a symlink to an absolute path', () => writeZip([file('handler.js', 'x'), file('link', '/etc/shadow', '120000')]), 400, /absolute path/],
    ['too many entries', () => writeZip(Array.from({ length: 51 }, (_, i) => file(`f${i}.txt`, 'x'))), 413, /51 entries; the limit is 50/],
    ['a zip bomb (small zip, 8 MB inflated)', () => writeZip([file('zeros.bin', Buffer.alloc(8 * 1024 * 1024))]), 413, /unpacks to more than/],
    ['a bomb whose header lies about its size', () => lyingSize(writeZip([file('zeros.bin', Buffer.alloc(8 * 1024 * 1024))])), 413, /more bytes than its header declares/],
    ['not a zip at all', () => Buffer.from('PK? no, just text'), 400, /not a readable zip/],
    ['a zip over the compressed limit', () => writeZip([file('noise.bin', randomish(2 * 1024 * 1024))]), 413, /too large|limit/],
    ['an empty zip', () => writeZip([]), 400, /no files/],
  ];
  for (const [what, make, status, message] of hostile) {
    it(`refuses ${what} with ${status}, leaving nothing unpacked`, async () => {
      const res = await upload(make());
      assert.equal(res.statusCode, status, res.body);
      assert.match(res.json().error, message);
      assert.deepEqual(await readdir(platform.uploadsDir).catch(() => []), []);
    });
  }

  it('refuses uploads to a function git manages with 409', async () => {
    await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}/functions`, headers: auth, payload: { name: 'gitfn', runtime: 'nodejs20' } });
    platform.manageByGit(NS, 'gitfn', 'infra');
    const res = await upload(writeZip([file('handler.js', 'x')]), 'gitfn');
    assert.equal(res.statusCode, 409);
    assert.match(res.json().error, /repository infra/);
  });

  it('reads a raw body as a zip whatever its content type: JSON is not a zip', async () => {
    const res = await app.inject({ method: 'POST', url: url('code', 'upload'), headers: auth, payload: { zip: 'no' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'invalid_zip');
  });
});

/** Rewrites every declared uncompressed size to 10 bytes, as a hostile zip would. */
function lyingSize(zip: Buffer): Buffer {
  const out = Buffer.from(zip);
  for (let i = 0; i < out.length - 4; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === 0x04034b50) out.writeUInt32LE(10, i + 22);
    if (sig === 0x02014b50) out.writeUInt32LE(10, i + 24);
  }
  return out;
}

/** Incompressible bytes without crypto's cost. */
function randomish(size: number): Buffer {
  const b = Buffer.alloc(size);
  let x = 2463534242;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
