// Reads unpacked code (an upload on disk, see UnpackedCode) back as CodeFiles, one file at a time.
import { constants } from 'node:fs';
import { open, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { CodeFile, UnpackedCode } from './types.ts';

/** The files of unpacked code, read one at a time from disk (never through a link). */
export async function* readUnpacked(code: Pick<UnpackedCode, 'root' | 'files'>): AsyncGenerator<CodeFile> {
  for (const f of code.files) {
    const abs = path.join(code.root, ...f.path.split('/'));
    if (f.mode === '120000') {
      yield { path: f.path, mode: f.mode, content: Buffer.from(await readlink(abs), 'utf8') };
      continue;
    }
    const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      yield { path: f.path, mode: f.mode, content: await handle.readFile() };
    } finally {
      await handle.close();
    }
  }
}

