// Reads unpacked code (an upload on disk, see UnpackedCode) back one file at a time: as build-context
// entries that stream each file's bytes when the tar is written, or as CodeFiles with their bytes.
import { constants, createReadStream, openSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { ContextFile } from '../build/context-tar.ts';
import type { CodeFile, UnpackedCode } from './types.ts';

/** The files of unpacked code as build-context entries whose bytes stream from disk when the tar is
 * written (never through a link), so packing holds one file's chunks at a time. */
export async function* streamUnpacked(code: Pick<UnpackedCode, 'root' | 'files'>): AsyncGenerator<ContextFile> {
  for (const f of code.files) {
    const abs = path.join(code.root, ...f.path.split('/'));
    if (f.mode === '120000') {
      yield { path: f.path, mode: f.mode, content: Buffer.from(await readlink(abs), 'utf8') };
      continue;
    }
    yield { path: f.path, mode: f.mode, content: { size: f.size, open: () => createReadStream('', { fd: openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW) }) } };
  }
}

/** The files of unpacked code with their bytes, read one at a time from disk (never through a link). */
export async function* readUnpacked(code: Pick<UnpackedCode, 'root' | 'files'>): AsyncGenerator<CodeFile> {
  for await (const f of streamUnpacked(code)) {
    yield { path: f.path, mode: f.mode, content: Buffer.isBuffer(f.content) ? f.content : await buffer(f.content.open()) };
  }
}
