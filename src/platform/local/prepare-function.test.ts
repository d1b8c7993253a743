import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import type { CodeFile } from '../types.ts';
import { ChildGroup } from './child-group.ts';
import { silentLogger } from './logger.ts';
import { buildKeyOf, FunctionPreparer, placeOf } from './prepare-function.ts';

const files: CodeFile[] = [
  { path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = () => 1;\n') },
  { path: 'bin/run.sh', mode: '100755', content: Buffer.from('#!/bin/sh\necho hi\n') },
  { path: 'link.js', mode: '120000', content: Buffer.from('handler.js') },
  { path: '/lib/common/util.js', mode: '100644', content: Buffer.from('exports.x = 1;\n') },
];

const made: string[] = [];
after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));

async function preparer() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sless-prepare-'));
  made.push(dataDir);
  return { dataDir, p: new FunctionPreparer({ dataDir, children: new ChildGroup(), logger: silentLogger }) };
}

test('the build key changes with the code, the runtime and the runtime version only', () => {
  const base = { runtime: 'nodejs20', codeHash: 'sha256:aa', runtimeVersion: '1' };
  assert.equal(buildKeyOf(base), buildKeyOf({ ...base }));
  assert.notEqual(buildKeyOf(base), buildKeyOf({ ...base, codeHash: 'sha256:ab' }));
  assert.notEqual(buildKeyOf(base), buildKeyOf({ ...base, runtime: 'nodejs22' }));
  assert.notEqual(buildKeyOf(base), buildKeyOf({ ...base, runtimeVersion: '2' }));
});

test('included files land at their repository path; unsafe paths are refused', () => {
  assert.equal(placeOf('/lib/common/util.js'), path.join('lib', 'common', 'util.js'));
  assert.equal(placeOf('handler.py'), 'handler.py');
  for (const bad of ['../x', '/../x', 'a/../../x', '', 'a//b', './a']) assert.throws(() => placeOf(bad), /not a plain relative path/);
});

test('a prepared folder keeps modes and symlinks, and is reused for the same key', async () => {
  const { p } = await preparer();
  let reads = 0;
  const req = {
    buildKey: 'k1',
    label: 'dev/f',
    files: () => {
      reads++;
      return files;
    },
    installSteps: () => [],
  };
  const first = await p.prepare(req);
  assert.equal(first.built, true);
  assert.equal(await readFile(path.join(first.appDir, 'lib/common/util.js'), 'utf8'), 'exports.x = 1;\n');
  assert.equal((await lstat(path.join(first.appDir, 'bin/run.sh'))).mode & 0o111, 0o111);
  assert.equal(await readlink(path.join(first.appDir, 'link.js')), 'handler.js');
  const second = await p.prepare(req);
  assert.equal(second.built, false);
  assert.equal(reads, 1, 'the code is not read again');
  const source = await p.readSource('k1');
  assert.deepEqual(
    source.map((f) => [f.path, f.mode]),
    [
      ['bin/run.sh', '100755'],
      ['handler.js', '100644'],
      ['lib/common/util.js', '100644'],
      ['link.js', '120000'],
    ],
  );
});

test('two concurrent prepares of one key build it once', async () => {
  const { p } = await preparer();
  let reads = 0;
  const req = { buildKey: 'k2', label: 'dev/f', files: () => (reads++, files), installSteps: () => [] };
  const [a, b] = await Promise.all([p.prepare(req), p.prepare(req)]);
  assert.equal(a.dir, b.dir);
  assert.equal(reads, 1);
});

test('a failed dependency install says why and leaves no half-built folder', async () => {
  const { p, dataDir } = await preparer();
  const req = {
    buildKey: 'k3',
    label: 'dev/broken',
    files: () => files,
    installSteps: (appDir: string) => [
      { command: 'sh', args: ['-c', 'echo "no matching distribution for nosuchpkg" >&2; exit 3'], cwd: appDir, env: { PATH: process.env.PATH ?? '' } },
    ],
  };
  await assert.rejects(p.prepare(req), /dev\/broken: "sh -c .*" failed \(exit 3\): no matching distribution for nosuchpkg/);
  assert.equal(await p.isPrepared('k3'), false);
  assert.deepEqual(await readdir(path.join(dataDir, 'builds')), []);
});

test('pruning keeps the folders still in use and removes the rest, including interrupted builds', async () => {
  const { p, dataDir } = await preparer();
  const req = (buildKey: string) => ({ buildKey, label: 'dev/f', files: () => files, installSteps: () => [] });
  await p.prepare(req('keep'));
  await p.prepare(req('old'));
  await mkdir(path.join(dataDir, 'builds', '.tmp-x-1234'), { recursive: true });
  const gone = await p.prune(new Set(['keep']));
  assert.deepEqual(gone.sort(), ['.tmp-x-1234', 'old']);
  assert.deepEqual(await readdir(path.join(dataDir, 'builds')), ['keep']);
});
