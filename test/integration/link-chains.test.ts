// Chained symlinks (a link through a link) never make sless write a file outside its folder: not
// from an uploaded zip, not from a git tree with include paths, not in `sless dev`'s prepared folders
// and not in the Kubernetes build context. Each link looked harmless on its own before; on disk, the
// files were written through them.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { run as validate } from '../../src/cli/validate.ts';
import { buildContextTar } from '../../src/build/context-tar.ts';
import { readZip, ZipError } from '../../src/http/read-zip.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import { ChildGroup } from '../../src/platform/local/child-group.ts';
import { silentLogger } from '../../src/platform/local/logger.ts';
import { openRepository } from '../../src/platform/local/open-repository.ts';
import { FunctionPreparer } from '../../src/platform/local/prepare-function.ts';
import type { CodeFile } from '../../src/platform/types.ts';
import { git, writeFiles } from '../helpers/git-server.ts';

const made: string[] = [];
after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));

const link = (p: string, target: string): CodeFile => ({ path: p, mode: '120000', content: Buffer.from(target) });
const file = (p: string, content = 'pwned\n'): CodeFile => ({ path: p, mode: '100644', content: Buffer.from(content) });

/** `a -> .`, then links through it, each "..": on disk a/b/c/d/e is 4 levels above the code folder. */
const chainedZipFiles: CodeFile[] = [
  link('a', '.'),
  link('a/b', '..'),
  link('a/b/c', '..'),
  link('a/b/c/d', '..'),
  link('a/b/c/d/e', '..'),
  file('a/b/c/d/e/pwned.txt'),
  file('handler.js', 'exports.handle = () => 1;\n'),
];

/**
 * Own links of a function folder that each stay inside lexically, and a link through them that
 * resolves 4 levels above the folder on disk; `include` of a repo folder of the same name writes
 * through it. (Names start with "-" so they sort before the "/"-prefixed included files.)
 */
const gitChain = {
  'fn/function.yaml': 'runtime: nodejs20\ninclude: ["-k"]\n',
  'fn/handler.js': 'exports.handle = () => 1;\n',
  'fn/-d/e/f/g/up': { content: '..', mode: 'symlink' as const },
  'fn/-d/e/f/up2': { content: '..', mode: 'symlink' as const },
  'fn/-d/e/up3': { content: '..', mode: 'symlink' as const },
  'fn/-k': { content: '-d/e/f/g/up/up2/up3/../../../../..', mode: 'symlink' as const },
  '-k/pwned.txt': 'pwned\n',
};

/** A fresh outer folder with the data dir inside it, 4 levels above a prepared code folder. */
async function outerAndDataDir(): Promise<{ outer: string; dataDir: string }> {
  const outer = await mkdtemp(path.join(os.tmpdir(), 'sless-links-'));
  made.push(outer);
  const dataDir = path.join(outer, 'data');
  await mkdir(dataDir);
  return { outer, dataDir };
}

async function everyPath(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      out.push(p);
      if (e.isDirectory()) await walk(path.join(d, e.name), p);
    }
  };
  await walk(dir, '');
  return out;
}

const preparerIn = (dataDir: string) => new FunctionPreparer({ dataDir, children: new ChildGroup(), logger: silentLogger });

describe('chained symlinks', () => {
  it('an uploaded zip with chained links is refused with 400-worthy reasons', async () => {
    await assert.rejects(readZip(writeZip(chainedZipFiles)), (err: unknown) => {
      assert.ok(err instanceof ZipError);
      assert.equal(err.tooLarge, false);
      assert.match(err.message, /through the symlink "a"|symlink "a" -> "\."/);
      return true;
    });
  });

  it('preparing such files anyway writes nothing outside the data dir (and refuses)', async () => {
    const { outer, dataDir } = await outerAndDataDir();
    await assert.rejects(
      preparerIn(dataDir).prepare({ buildKey: 'k', label: 'dev/zip', files: () => chainedZipFiles, installSteps: () => [] }),
      /symlink/,
    );
    assert.deepEqual((await everyPath(outer)).filter((p) => !p.startsWith('data')), []);
    assert.deepEqual(await everyPath(path.join(dataDir, 'builds')).catch(() => []), []);
  });

  it('a git tree whose links chain out of the folder is reported by the snapshot (what validate shows)', async () => {
    const { outer, dataDir } = await outerAndDataDir();
    const repo = path.join(outer, 'repo');
    await mkdir(repo);
    await git(['init', '-q', '-b', 'main'], repo);
    await writeFiles(repo, gitChain);
    await git(['add', '-A'], repo);
    await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'chain'], repo);
    const reader = await openRepository({ repo, path: '', cacheDir: path.join(dataDir, 'git'), logger: silentLogger });
    const read = await reader.read();
    const fn = read.snapshot.functions.find((f) => f.name === 'fn');
    assert.ok(fn);
    assert.ok(
      fn.problems.some((p) => /through the symlink "-k"|symlink "-k"/.test(p.message)),
      JSON.stringify(fn.problems),
    );
    assert.equal(fn.codeHash, undefined);
    let stderr = '';
    const io = { stdout: new PassThrough(), stderr: new PassThrough().on('data', (d: Buffer) => (stderr += d.toString())) };
    assert.equal(await validate([repo], io), 1);
    assert.match(stderr, /fn\/-k.*symlink "-k"/);
  });

  it('the same files, prepared or packed as a build context, are refused and write nothing outside', async () => {
    const { outer, dataDir } = await outerAndDataDir();
    const files: CodeFile[] = [
      link('-d/e/f/g/up', '..'),
      link('-d/e/f/up2', '..'),
      link('-d/e/up3', '..'),
      link('-k', '-d/e/f/g/up/up2/up3/../../../../..'),
      file('/-k/pwned.txt'),
      file('handler.js'),
    ];
    await assert.rejects(
      preparerIn(dataDir).prepare({ buildKey: 'k', label: 'dev/git', files: () => files, installSteps: () => [] }),
      /symlink/,
    );
    assert.deepEqual((await everyPath(outer)).filter((p) => !p.startsWith('data')), []);
    const tar = buildContextTar(files.map((f) => ({ ...f, path: f.path.replace(/^\//, '') })));
    await assert.rejects(async () => {
      for await (const _ of tar) void _;
    }, /symlink/);
  });

  it('links that stay inside, even through other links, are kept', async () => {
    const { dataDir } = await outerAndDataDir();
    const files: CodeFile[] = [file('lib/util.js'), link('current', 'lib'), link('u', 'current/util.js'), file('handler.js')];
    assert.equal((await readZip(writeZip(files))).length, 4);
    const prepared = await preparerIn(dataDir).prepare({ buildKey: 'ok', label: 'dev/ok', files: () => files, installSteps: () => [] });
    assert.deepEqual((await everyPath(prepared.sourceDir)).sort(), ['current', 'handler.js', 'lib', 'lib/util.js', 'u']);
  });
});
