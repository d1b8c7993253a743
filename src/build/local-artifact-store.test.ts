import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { artifactStoreContract } from '../../test/helpers/artifact-store-contract.ts';
import { LocalArtifactStore } from './local-artifact-store.ts';

const roots: string[] = [];
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

async function fresh(): Promise<LocalArtifactStore> {
  const root = await mkdtemp(path.join(tmpdir(), 'sless-artifacts-'));
  roots.push(root);
  const store = new LocalArtifactStore({ dir: path.join(root, 'store') });
  await store.init();
  return store;
}

describe('LocalArtifactStore', () => {
  artifactStoreContract(fresh);

  it('keeps objects as plain files under its directory and no temporary files after a failed write', async () => {
    const store = await fresh();
    await store.put('contexts/abc.tar.gz', Readable.from([Buffer.from('ctx')]));
    async function* failing() {
      yield Buffer.from('x');
      throw new Error('boom');
    }
    await assert.rejects(store.put('contexts/def.tar.gz', Readable.from(failing())), /cannot write "contexts\/def\.tar\.gz"/);
    const dir = store.location.replace(/^directory /, '');
    assert.deepEqual(await readdir(path.join(dir, 'contexts')), ['abc.tar.gz']);
  });
});
