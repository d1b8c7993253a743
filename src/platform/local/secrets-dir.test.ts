import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { queueCredentialsFrom } from './local-queues.ts';
import { readSecretDir } from './secrets-dir.ts';

describe('--secrets-dir', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sless-secrets-'));
    await mkdir(path.join(dir, 'rabbit'));
    await writeFile(path.join(dir, 'rabbit/username'), 'app\n');
    await writeFile(path.join(dir, 'rabbit/password'), 'p\nw\n');
    await writeFile(path.join(dir, 'rabbit/.hidden'), 'x');
    await mkdir(path.join(dir, 'half'));
    await writeFile(path.join(dir, 'half/username'), 'app');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads one file per key, dropping one trailing newline and dot files', async () => {
    assert.deepEqual(await readSecretDir(dir, 'rabbit'), { username: 'app', password: 'p\nw' });
  });

  it('names what is missing: no --secrets-dir, no folder, no key', async () => {
    await assert.rejects(readSecretDir(undefined, 'rabbit'), /no --secrets-dir; put its keys in DIR\/rabbit\/<key>/);
    await assert.rejects(readSecretDir(dir, 'nope'), /secret "nope" not found: no folder/);
    await assert.rejects(queueCredentialsFrom(dir, 'half'), /secret "half" has no password/);
    assert.deepEqual(await queueCredentialsFrom(dir, 'rabbit'), { username: 'app', password: 'p\nw' });
  });
});
