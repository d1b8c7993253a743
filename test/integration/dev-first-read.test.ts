// Before `sless dev` has read its repository once, it cannot know whether a name is one of its
// functions: /fn answers 503 saying it is still reading (not 404 "does not exist"); once read, a
// function of the repository is known at once (503 until it serves) and any other name is 404.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { LocalPlatform } from '../../src/platform/local/local-platform.ts';
import { localRuntimes } from '../../src/platform/local/local-runtimes.ts';
import { silentLogger } from '../../src/platform/local/logger.ts';
import { openRepository } from '../../src/platform/local/open-repository.ts';
import type { RepositoryReader } from '../../src/source/repository-read.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-first-read-'));
after(() => rm(root, { recursive: true, force: true }));
const repo = path.join(root, 'repo');
await mkdir(path.join(repo, 'hello'), { recursive: true });
await writeFile(path.join(repo, 'hello', 'function.yaml'), 'runtime: python3.11\n');
await writeFile(path.join(repo, 'hello', 'handler.py'), 'def handle(event):\n    return "hi"\n');
const dataDir = path.join(root, 'data');

it('answers 503 "still reading" for an unknown name until the first read, then knows', async () => {
  const real = await openRepository({ repo, path: '', cacheDir: path.join(dataDir, 'git'), logger: silentLogger });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reads = 0;
  const repository: RepositoryReader = {
    displayUrl: real.displayUrl,
    branch: real.branch,
    path: real.path,
    read: async () => {
      reads++;
      await gate;
      return real.read();
    },
  };
  const platform = new LocalPlatform({
    dataDir,
    namespace: 'dev',
    repoName: 'local',
    repository,
    runtimes: localRuntimes(),
    pollIntervalMs: 3_600_000,
    logger: silentLogger,
    publicUrl: () => 'http://localhost:8080',
  });
  try {
    await platform.start();
    while (reads === 0) await new Promise((r) => setTimeout(r, 10));
    for (const name of ['hello', 'nope']) {
      const e = await platform.resolveEndpoint('dev', name);
      assert.deepEqual(e, { kind: 'not-ready', reason: `sless dev is still reading the repository ${real.displayUrl} (its first sync)` });
    }
    assert.deepEqual(await platform.resolveEndpoint('other', 'hello'), { kind: 'not-found' }, 'another namespace is not the repository’s');
    release();
    for (;;) {
      const e = await platform.resolveEndpoint('dev', 'hello');
      if (e.kind === 'ready') break;
      assert.equal(e.kind, 'not-ready');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(await platform.resolveEndpoint('dev', 'nope'), { kind: 'not-found' });
  } finally {
    release();
    await platform.close();
  }
});
