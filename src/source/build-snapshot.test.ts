// Discovery, manifests, include paths and code_hash over a working tree (the git adapter is covered
// by test/integration/source.test.ts against a real git server).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { writeFiles } from '../../test/helpers/git-server.ts';
import type { FileSpec } from '../../test/helpers/git-server.ts';
import { buildSnapshot, SnapshotBuilder } from './build-snapshot.ts';
import { hashFiles } from './code-hash.ts';
import { readFunctionFiles } from './read-function-files.ts';
import type { Snapshot } from './types.ts';
import { WorkTree } from './work-tree.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function folder(files: Record<string, FileSpec>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-snap-'));
  dirs.push(dir);
  await writeFiles(dir, files);
  return dir;
}

async function snapshotOf(files: Record<string, FileSpec>, watched = ''): Promise<Snapshot> {
  return buildSnapshot(new WorkTree(await folder(files)), { path: watched });
}

const NODE = 'runtime: nodejs20\n';
const byName = (s: Snapshot, name: string) => {
  const f = s.functions.find((x) => x.name === name);
  assert.ok(f, `function ${name} in ${JSON.stringify(s.functions.map((x) => x.name))}`);
  return f;
};

describe('discovery', () => {
  it('finds every folder with function.yaml and does not search inside it', async () => {
    const s = await snapshotOf({
      'functions/a/function.yaml': NODE,
      'functions/a/nested/function.yaml': NODE,
      'functions/group/b/function.yaml': NODE,
      'functions/readme.md': 'x',
      'node_modules/c/function.yaml': NODE,
    });
    assert.deepEqual(
      s.functions.map((f) => [f.name, f.path]),
      [
        ['a', 'functions/a'],
        ['b', 'functions/group/b'],
      ],
    );
  });
  it('searches only under the watched path', async () => {
    const s = await snapshotOf({ 'functions/a/function.yaml': NODE, 'other/b/function.yaml': NODE }, './functions/');
    assert.deepEqual(s.functions.map((f) => f.path), ['functions/a']);
  });
  it('refuses a watched path that does not exist', async () => {
    await assert.rejects(snapshotOf({ 'a/function.yaml': NODE }, 'nope'), /"nope" is not a folder/);
  });
  it('gives a working tree a content digest as revision', async () => {
    const files = { 'a/function.yaml': NODE, 'a/h.js': '1' };
    assert.equal((await snapshotOf(files)).revision, (await snapshotOf(files)).revision);
    assert.notEqual((await snapshotOf(files)).revision, (await snapshotOf({ ...files, 'a/h.js': '2' })).revision);
  });
});

describe('problems stay with their function', () => {
  it('a broken manifest breaks only its own function and keeps the declared name', async () => {
    const s = await snapshotOf({ 'a/function.yaml': NODE, 'b/function.yaml': 'name: bee\nruntime: [oops\n' });
    assert.ok(byName(s, 'a').codeHash);
    const b = byName(s, 'bee');
    assert.equal(b.manifest, undefined);
    assert.equal(b.codeHash, undefined);
    assert.ok(b.problems.length > 0);
    assert.equal(b.problems[0]?.file, 'b/function.yaml');
  });
  it('two folders with one name are both errors, the others unaffected', async () => {
    const s = await snapshotOf({ 'x/function.yaml': 'name: same\n' + NODE, 'y/function.yaml': 'name: same\n' + NODE, 'z/function.yaml': NODE });
    assert.equal(s.functions.filter((f) => f.name === 'same' && f.problems.length > 0).length, 2);
    assert.ok(byName(s, 'z').codeHash);
  });
  it('an include with ".." or an absolute path is a problem on its line', async () => {
    const s = await snapshotOf({ 'a/function.yaml': `${NODE}include:\n  - ../etc\n`, 'b/function.yaml': `${NODE}include: [/etc]\n` });
    for (const name of ['a', 'b']) {
      const f = byName(s, name);
      assert.equal(f.codeHash, undefined);
      assert.ok(f.problems.some((p) => p.key.startsWith('include')), JSON.stringify(f.problems));
    }
  });
  it('a missing include path is a problem naming it', async () => {
    const f = byName(await snapshotOf({ 'a/function.yaml': `${NODE}include:\n  - lib/none\n` }), 'a');
    assert.deepEqual(
      f.problems.map((p) => [p.file, p.line, p.key]),
      [['a/function.yaml', 3, 'include[0]']],
    );
    assert.match(f.problems[0]?.message ?? '', /lib\/none/);
  });
  it('an include through a symlink is never followed', async () => {
    const f = byName(await snapshotOf({ 'a/function.yaml': `${NODE}include: [lnk/x]\n`, 'lib/x/u.js': 'u', lnk: { content: 'lib', mode: 'symlink' } }), 'a');
    assert.match(f.problems[0]?.message ?? '', /symlink/);
  });
  it('a symlink leaving the function folder is a problem; one inside it is hashed as a link', async () => {
    const s = await snapshotOf({
      'out/function.yaml': NODE,
      'out/secret': { content: '../../etc/passwd', mode: 'symlink' },
      'abs/function.yaml': NODE,
      'abs/secret': { content: '/etc/passwd', mode: 'symlink' },
      'in/function.yaml': NODE,
      'in/h.js': 'x',
      'in/alias.js': { content: 'sub/../h.js', mode: 'symlink' },
    });
    assert.deepEqual(byName(s, 'out').problems.map((p) => p.file), ['out/secret']);
    assert.deepEqual(byName(s, 'abs').problems.map((p) => p.file), ['abs/secret']);
    assert.ok(byName(s, 'in').codeHash);
  });
});

describe('code_hash from a working tree', () => {
  const base: Record<string, FileSpec> = {
    'fn/a/function.yaml': `${NODE}include: [lib/common]\nignore: ["*.test.js"]\n`,
    'fn/a/handler.js': 'h',
    'fn/a/.slessignore': 'fixtures/\n',
    'fn/b/function.yaml': NODE,
    'fn/b/handler.js': 'h',
    'lib/common/u.js': 'u',
  };
  const hashes = async (files: Record<string, FileSpec>) => {
    const s = await snapshotOf(files);
    return { a: byName(s, 'a').codeHash, b: byName(s, 'b').codeHash };
  };

  it('ignores function.yaml edits, ignored and .slessignore-d files', async () => {
    const h = await hashes(base);
    assert.deepEqual(
      await hashes({ ...base, 'fn/a/function.yaml': `${NODE}include: [lib/common]\nignore: ["*.test.js"]\nmemory_mb: 256\n`, 'fn/a/x.test.js': 't', 'fn/a/fixtures/f.json': '{}', 'lib/common/u.test.js': 't' }),
      h,
    );
  });
  it('changes for exactly the functions including a changed file', async () => {
    const h = await hashes(base);
    const changed = await hashes({ ...base, 'lib/common/u.js': 'u2' });
    assert.notEqual(changed.a, h.a);
    assert.equal(changed.b, h.b);
  });
  it('changes when a file becomes executable', async () => {
    const h = await hashes(base);
    const changed = await hashes({ ...base, 'fn/b/handler.js': { content: 'h', mode: 'exec' } });
    assert.notEqual(changed.b, h.b);
  });
  it('does not depend on where the function folder is', async () => {
    const one = byName(await snapshotOf({ 'x/f/function.yaml': NODE, 'x/f/h.js': '1' }), 'f');
    const two = byName(await snapshotOf({ 'y/z/f/function.yaml': NODE, 'y/z/f/h.js': '1' }), 'f');
    assert.equal(one.codeHash, two.codeHash);
  });
  it('equals hashFiles over the files readFunctionFiles yields', async () => {
    const dir = await folder({ ...base, 'fn/a/run.sh': { content: '#!/bin/sh', mode: 'exec' }, 'fn/a/l': { content: 'handler.js', mode: 'symlink' } });
    const tree = new WorkTree(dir);
    const a = byName(await buildSnapshot(tree), 'a');
    const files = [];
    for await (const f of readFunctionFiles(tree, a)) files.push(f);
    assert.deepEqual(files.map((f) => f.path).sort(), ['.slessignore', '/lib/common/u.js', 'handler.js', 'l', 'run.sh']);
    assert.equal(hashFiles(files, a.manifest?.ignore), a.codeHash);
  });
});

describe('SnapshotBuilder', () => {
  it('gives the same result as a fresh build after changes (its memo never goes stale)', async () => {
    const dir = await folder({ 'a/function.yaml': `${NODE}include: [lib]\n`, 'lib/u.js': '1', 'b/function.yaml': NODE });
    const builder = new SnapshotBuilder();
    await builder.build(new WorkTree(dir));
    await writeFiles(dir, { 'lib/u.js': '2', 'b/function.yaml': 'runtime: python3.12\n' });
    assert.deepEqual(await builder.build(new WorkTree(dir)), await buildSnapshot(new WorkTree(dir)));
  });
});

describe('hostile manifests fail their own folder only (issue 31 items 9, 10)', () => {
  it('an event nested 15,000 deep and a cron that never fires: those functions broken, the sibling whole', async () => {
    const s = await snapshotOf({
      'functions/deep/function.yaml': `${NODE}jobs: [{name: seed, run_id: 1, event: ${'['.repeat(15_000)}${']'.repeat(15_000)}}]\n`,
      'functions/never/function.yaml': `${NODE}schedules: [{name: april, cron: "0 0 31 4 *"}]\n`,
      'functions/healthy/function.yaml': NODE,
    });
    assert.equal(byName(s, 'deep').manifest, undefined);
    assert.match(byName(s, 'deep').problems[0]?.message ?? '', /more than 256 "\[" or "\{" open at once/);
    assert.equal(byName(s, 'never').manifest, undefined);
    assert.match(byName(s, 'never').problems[0]?.message ?? '', /never fires/);
    assert.ok(byName(s, 'healthy').manifest, 'the healthy sibling is read and deployed');
  });
});
