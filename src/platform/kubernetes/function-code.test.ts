// An upload on Kubernetes becomes a build context in the artifact store: packed from the unpacked
// folder one file at a time, so an upload that inflates to hundreds of megabytes never sits in the
// controller's memory (the process that also serves /fn).
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { ArtifactStore } from '../../build/artifact-store.ts';
import type { UnpackedCode } from '../types.ts';
import { FunctionCode } from './function-code.ts';

const MiB = 1024 * 1024;

/** A store that only drains what it is given, counting the bytes. */
function drainingStore(): ArtifactStore & { stored: number } {
  const store = {
    stored: 0,
    location: 'memory://drain',
    has: () => Promise.resolve(false),
    async put(_key: string, body: Readable) {
      for await (const chunk of body) store.stored += (chunk as Buffer).length;
    },
  };
  return store as unknown as ArtifactStore & { stored: number };
}

describe('FunctionCode.save of an unpacked upload', () => {
  it('packs the context reading one file at a time: 256 MiB of code grow Buffer memory by far less', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-fc-'));
    try {
      const root = path.join(dir, 'code');
      await mkdir(root);
      const chunk = Buffer.alloc(4 * MiB);
      const index = 'module.exports = () => "hi";';
      await writeFile(path.join(root, 'index.js'), index);
      const files: UnpackedCode['files'][number][] = [{ path: 'index.js', mode: '100644', oid: 'x', size: index.length }];
      for (let i = 0; i < 64; i++) {
        const name = `blob-${String(i).padStart(2, '0')}.bin`;
        await writeFile(path.join(root, name), chunk);
        files.push({ path: name, mode: '100644', oid: 'x', size: chunk.length });
      }
      const code: UnpackedCode = { dir, root, files, codeHash: 'sha256:test-upload' };
      const store = drainingStore();
      const base = process.memoryUsage().arrayBuffers;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
      try {
        await new FunctionCode(store, { runtimeImagePrefix: 'registry.test/sless/runtime', bucket: 'b' }).save('team', 'big', { runtime: 'nodejs20' }, code);
      } finally {
        clearInterval(sampler);
      }
      assert.ok(store.stored > 0, 'the context reached the store');
      const grownMiB = (peak - base) / MiB;
      assert.ok(grownMiB < 64, `Buffer memory grew by ${grownMiB.toFixed(0)} MiB while packing 256 MiB of code`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
