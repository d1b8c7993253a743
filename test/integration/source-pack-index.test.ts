// The in-process pack indexer (src/source/pack-index.ts) against git itself: for packs git wrote, the
// `.idx` it makes is byte for byte the one `git index-pack` makes; a thin pack (what a fetch with
// `thin-pack` brings) names its outside bases and, given them, becomes a pack git verifies and reads;
// a damaged pack is refused (the fetch then hands it to `git index-pack`, which refuses it too).
// Tree objects round-trip through the TreeMemo's serialisation (the next fetch's delta bases).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseTreeObject, serializeTree } from '../../src/source/git-tree.ts';
import { indexPack, PackIndexError, ThinPackError } from '../../src/source/pack-index.ts';
import type { PackBase } from '../../src/source/pack-index.ts';

const execFileP = promisify(execFile);
const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

const git = async (dir: string, args: string[]): Promise<string> => (await execFileP('git', ['-C', dir, ...args], { env: ENV, maxBuffer: 64 << 20 })).stdout;

/** Runs git with `input` on stdin; resolves with stdout as bytes. */
function gitBytes(dir: string, args: string[], input: string | Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', dir, ...args], { env: ENV });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`git ${args.join(' ')}: ${err}`))));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sless-pack-'));
  await git(dir, ['init', '-q', '-b', 'main']);
  // Files that grow commit by commit: git stores most versions as deltas (chains several deep).
  for (let i = 1; i <= 24; i++) {
    await writeFile(path.join(dir, `f${i % 4}.txt`), Array.from({ length: i * 40 }, (_, n) => `line ${n}\n`).join(''));
    await git(dir, ['add', '-A']);
    await git(dir, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', `c${i}`]);
  }
});
after(() => rm(dir, { recursive: true, force: true }));

async function packOf(args: string[], revs: string): Promise<Buffer> {
  return gitBytes(dir, ['pack-objects', '--stdout', '--window=50', '--depth=10', ...args], revs);
}

describe('indexing a fetched pack in this process', () => {
  for (const [what, args] of [
    ['offset deltas', ['--delta-base-offset']],
    ['deltas naming their base by id', []],
  ] as const) {
    it(`writes the .idx git index-pack writes (${what})`, async () => {
      const pack = await packOf([...args, '--revs'], 'main\n');
      const out = path.join(dir, `check-${args.length}.pack`);
      await writeFile(out, pack);
      await git(dir, ['index-pack', out]);
      const expected = await readFile(out.replace(/\.pack$/, '.idx'));
      const indexed = indexPack(pack);
      assert.equal(indexed.objects.size, 24 * 3, 'each commit, its tree and its changed file');
      assert.ok(Buffer.compare(indexed.idx, expected) === 0, 'the same .idx bytes as git index-pack');
      assert.equal(indexed.checksum, pack.subarray(pack.length - 20).toString('hex'));
      assert.equal(indexed.pack, pack);
    });
  }

  it('a thin pack names the bases outside it; given them, it becomes a pack git verifies and reads', async () => {
    const thin = await packOf(['--thin', '--revs', '--delta-base-offset'], 'main\n^main~1\n');
    let missing: readonly string[] = [];
    assert.throws(
      () => indexPack(thin),
      (err: unknown) => err instanceof ThinPackError && (missing = err.missing).length > 0,
    );
    const bases = new Map<string, PackBase>();
    for (const oid of missing) {
      const type = (await git(dir, ['cat-file', '-t', oid])).trim() as PackBase['type'];
      bases.set(oid, { type, content: await gitBytes(dir, ['cat-file', type, oid], '') });
    }
    const fixed = indexPack(thin, bases);
    assert.ok(fixed.pack.length > thin.length);
    // A repository holding nothing else: git must find every object of the head commit in this pack.
    const other = await mkdtemp(path.join(os.tmpdir(), 'sless-pack-other-'));
    try {
      await git(other, ['init', '-q', '--bare']);
      const name = path.join(other, 'objects', 'pack', `pack-${fixed.checksum}`);
      await writeFile(`${name}.pack`, fixed.pack);
      await writeFile(`${name}.idx`, fixed.idx);
      await git(other, ['verify-pack', `${name}.idx`]);
      const head = (await git(dir, ['rev-parse', 'main'])).trim();
      for (const f of ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt']) {
        const blob = (await git(dir, ['rev-parse', `main:${f}`])).trim();
        if (fixed.objects.has(blob)) assert.equal(await git(other, ['cat-file', 'blob', blob]), await git(dir, ['show', `main:${f}`]));
      }
      assert.match(await git(other, ['cat-file', 'commit', head]), /^tree [0-9a-f]{40}\n/);
      assert.equal(fixed.objects.get(head)?.type, 'commit');
      assert.deepEqual((await readdir(path.join(other, 'objects', 'pack'))).length, 2);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('refuses a damaged pack', async () => {
    const pack = Buffer.from(await packOf(['--revs'], 'main\n'));
    pack[40] = (pack[40] ?? 0) ^ 0xff;
    assert.throws(() => indexPack(pack), (err: unknown) => err instanceof PackIndexError && /checksum/.test(err.message));
    assert.throws(() => indexPack(Buffer.from('not a pack at all, not even close')), PackIndexError);
  });

  it('tree objects survive parseTreeObject + serializeTree unchanged', async () => {
    const root = (await git(dir, ['rev-parse', 'main^{tree}'])).trim();
    const raw = await gitBytes(dir, ['cat-file', 'tree', root], '');
    const entries = parseTreeObject(raw);
    assert.deepEqual(
      entries.map((e) => e.name),
      ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt'],
    );
    assert.ok(Buffer.compare(serializeTree(entries), raw) === 0);
  });
});
