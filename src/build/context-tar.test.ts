import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { buildContextTar, contextKey, type ContextFile } from './context-tar.ts';

const files: ContextFile[] = [
  { path: 'handler.js', mode: '100644', content: Buffer.from('export const handle = () => "hi";\n') },
  { path: 'bin/run.sh', mode: '100755', content: Buffer.from('#!/bin/sh\necho run\n') },
  { path: 'lib/common/util.js', mode: '100644', content: Buffer.from('export const x = 1;\n') },
  { path: 'current', mode: '120000', content: Buffer.from('lib/common/util.js') },
  { path: 'lib-a.js', mode: '100644', content: Buffer.alloc(0) },
  { path: `deep/${'d'.repeat(120)}/ünïcode name.txt`, mode: '100644', content: Buffer.from('long path\n') },
];
const dockerfile = { path: 'Dockerfile', content: 'FROM scratch\nCOPY function/ /app/\n' };

async function tarOf(input: AsyncIterable<ContextFile> | Iterable<ContextFile>): Promise<Buffer> {
  return buffer(buildContextTar(input, [dockerfile]));
}

async function* slowly(list: ContextFile[]): AsyncIterable<ContextFile> {
  for (const f of list) {
    await new Promise((r) => setImmediate(r));
    yield f;
  }
}

interface Listed {
  name: string;
  type: string;
  mode: number;
  mtime: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  linkname: string | null;
  body: string;
}

async function list(tgz: Buffer): Promise<Listed[]> {
  const out: Listed[] = [];
  const ex = extract();
  const done = (async () => {
    for await (const entry of ex) {
      const h = entry.header;
      const body = (await buffer(entry)).toString();
      out.push({
        name: h.name, type: h.type, mode: h.mode, mtime: h.mtime.getTime(), uid: h.uid, gid: h.gid,
        uname: h.uname, gname: h.gname, linkname: h.linkname, body,
      });
    }
  })();
  ex.end(gunzipSync(tgz));
  await done;
  return out;
}

describe('buildContextTar', () => {
  it('gives byte-equal output whatever order (or iterable kind) the files arrive in', async () => {
    const a = await tarOf(files);
    const b = await tarOf([...files].reverse());
    const c = await tarOf(slowly([files[3]!, files[0]!, files[5]!, files[1]!, files[4]!, files[2]!]));
    assert.equal(createHash('sha256').update(b).digest('hex'), createHash('sha256').update(a).digest('hex'));
    assert.deepEqual(c, a);
  });

  it('writes a gzip header without mtime and with a fixed OS byte', async () => {
    const tgz = await tarOf(files);
    assert.deepEqual([...tgz.subarray(0, 4)], [0x1f, 0x8b, 8, 0]);
    assert.equal(tgz.readUInt32LE(4), 0, 'gzip mtime');
    assert.equal(tgz[9], 3, 'gzip OS = Unix');
  });

  it('puts code under function/, generated files at the root, parents first, sorted, owned by root at the epoch', async () => {
    const entries = await list(await tarOf(files));
    assert.deepEqual(
      entries.map((e) => `${e.type} ${e.name}`),
      [
        'file Dockerfile',
        'directory function/',
        'directory function/bin/',
        'file function/bin/run.sh',
        'symlink function/current',
        'directory function/deep/',
        `directory function/deep/${'d'.repeat(120)}/`,
        `file function/deep/${'d'.repeat(120)}/ünïcode name.txt`,
        'file function/handler.js',
        'file function/lib-a.js',
        'directory function/lib/',
        'directory function/lib/common/',
        'file function/lib/common/util.js',
      ],
    );
    for (const e of entries) {
      assert.deepEqual([e.mtime, e.uid, e.gid, e.uname, e.gname], [0, 0, 0, '', ''], e.name);
    }
    const byName = new Map(entries.map((e) => [e.name, e]));
    assert.equal(byName.get('function/bin/run.sh')!.mode, 0o755);
    assert.equal(byName.get('function/handler.js')!.mode, 0o644);
    assert.equal(byName.get('function/lib/')!.mode, 0o755);
    assert.equal(byName.get('function/current')!.linkname, 'lib/common/util.js');
    assert.equal(byName.get('function/handler.js')!.body, 'export const handle = () => "hi";\n');
    assert.equal(byName.get('Dockerfile')!.body, dockerfile.content);
  });

  it('is read by GNU tar: listing and extraction keep modes and the symlink', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sless-ctx-'));
    try {
      const archive = path.join(dir, 'ctx.tar.gz');
      await writeFile(archive, await tarOf(files));
      const listing = execFileSync('tar', ['-tzvf', archive], { encoding: 'utf8' });
      assert.match(listing, /^-rwxr-xr-x 0\/0\s+19 1970-01-01 00:00 function\/bin\/run\.sh$/m);
      assert.match(listing, /^lrwxrwxrwx 0\/0\s+0 1970-01-01 00:00 function\/current -> lib\/common\/util\.js$/m);
      const out = path.join(dir, 'x');
      execFileSync('mkdir', [out]);
      execFileSync('tar', ['-xzf', archive, '-C', out]);
      assert.equal((await stat(path.join(out, 'function/bin/run.sh'))).mode & 0o777, 0o755);
      assert.equal(await readlink(path.join(out, 'function/current')), 'lib/common/util.js');
      assert.equal(await readFile(path.join(out, 'function/current'), 'utf8'), 'export const x = 1;\n');
      assert.equal(await readFile(path.join(out, 'Dockerfile'), 'utf8'), dockerfile.content);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('honours another code folder, or none', async () => {
    const names = async (codeDir: string) =>
      (await list(await buffer(buildContextTar(files.slice(0, 1), [dockerfile], { codeDir })))).map((e) => e.name);
    assert.deepEqual(await names('src/app'), ['Dockerfile', 'src/', 'src/app/', 'src/app/handler.js']);
    assert.deepEqual(await names(''), ['Dockerfile', 'handler.js']);
  });

  it('rejects unsafe paths, duplicates and file/directory clashes on the stream, naming the path', async () => {
    const bad = async (input: ContextFile[], extra = [dockerfile], codeDir?: string) =>
      buffer(buildContextTar(input, extra, codeDir === undefined ? {} : { codeDir }));
    const f = (p: string): ContextFile => ({ path: p, mode: '100644', content: Buffer.from('x') });
    await assert.rejects(bad([f('../etc/passwd')]), /"\.\.\/etc\/passwd" is not a clean relative posix path/);
    await assert.rejects(bad([f('/abs')]), /"\/abs"/);
    await assert.rejects(bad([f('a//b')]), /"a\/\/b"/);
    await assert.rejects(bad([f('a'), f('a')]), /two entries for "function\/a"/);
    await assert.rejects(bad([f('a'), f('a/b')]), /"function\/a" is both a file and a directory/);
    await assert.rejects(bad([f('Dockerfile')], [dockerfile], ''), /two entries for "Dockerfile"/);
  });

  it('streams large files with backpressure and lets a reader stop early', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 7);
    big.write('start');
    const entries = await list(await buffer(buildContextTar([{ path: 'model.bin', mode: '100644', content: big }])));
    assert.equal(entries.find((e) => e.name === 'function/model.bin')!.body.length, big.length);

    const early = buildContextTar([{ path: 'model.bin', mode: '100644', content: big }]);
    for await (const _chunk of early) break; // destroys the stream
    assert.equal(early.destroyed, true);
  });

  it('gives the same bytes when file contents stream in as when they are given, and fails on a size that does not match', async () => {
    const bytes = (f: ContextFile) => f.content as Buffer;
    const streamed = files.map((f): ContextFile => (f.mode === '120000' ? f : { ...f, content: { size: bytes(f).length, open: () => Readable.from([bytes(f)]) } }));
    assert.deepEqual(await tarOf(streamed), await tarOf(files));
    const short: ContextFile = { path: 'a.txt', mode: '100644', content: { size: 10, open: () => Readable.from([Buffer.from('abc')]) } };
    await assert.rejects(buffer(buildContextTar([short])), /size|premature|end/i);
  });

  it('passes on an error from the file source', async () => {
    async function* failing(): AsyncIterable<ContextFile> {
      yield files[0]!;
      throw new Error('git blob read failed');
    }
    await assert.rejects(buffer(buildContextTar(failing(), [])), /git blob read failed/);
  });
});

describe('contextKey', () => {
  it('is content-addressed by the build key and the generated files, in any order', () => {
    const k = contextKey('sha256:abc|nodejs20|node:20', [dockerfile, { path: 'x', content: 'y' }]);
    assert.match(k, /^contexts\/[0-9a-f]{64}\.tar\.gz$/);
    assert.equal(contextKey('sha256:abc|nodejs20|node:20', [{ path: 'x', content: Buffer.from('y') }, dockerfile]), k);
    assert.notEqual(contextKey('sha256:abd|nodejs20|node:20', [dockerfile, { path: 'x', content: 'y' }]), k);
    assert.notEqual(contextKey('sha256:abc|nodejs20|node:20', [dockerfile, { path: 'x', content: 'z' }]), k);
    assert.notEqual(contextKey('sha256:abc|nodejs20|node:20', [dockerfile, { path: 'x', content: 'y', mode: '100755' }]), k);
    assert.notEqual(contextKey('sha256:abc|nodejs20|node:20', [dockerfile, { path: 'x', content: 'y' }], { codeDir: 'src' }), k);
  });
});
