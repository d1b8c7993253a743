// Reads a function's code back out of its stored build context (src/build/context-tar.ts: the code under
// `function/`, generated files such as the Dockerfile at the root), for /v1 .../source and for rebuilding
// a context after a runtime or entrypoint change.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as createExtract } from 'tar-stream';
import { DEFAULT_CODE_DIR } from '../../build/context-tar.ts';
import type { CodeFile } from '../types.ts';

export interface ReadContextLimits {
  /** Total bytes of file contents; a context past it is refused (it was not made by sless). */
  readonly maxBytes: number;
  readonly maxEntries: number;
}

const DEFAULT_LIMITS: ReadContextLimits = { maxBytes: 256 * 1024 * 1024, maxEntries: 50_000 };

export async function readContextCode(tarGz: Readable, limits: ReadContextLimits = DEFAULT_LIMITS): Promise<CodeFile[]> {
  const prefix = `${DEFAULT_CODE_DIR}/`;
  const files: CodeFile[] = [];
  let bytes = 0;
  let entries = 0;
  const extract = createExtract();
  const reading = (async () => {
    for await (const entry of extract) {
      const h = entry.header;
      if (++entries > limits.maxEntries) throw new Error(`build context has more than ${limits.maxEntries} entries`);
      const inCode = h.name.startsWith(prefix) && h.name.length > prefix.length;
      if (!inCode || (h.type !== 'file' && h.type !== 'symlink')) {
        entry.resume();
        continue;
      }
      const path = h.name.slice(prefix.length);
      if (h.type === 'symlink') {
        entry.resume();
        files.push({ path, mode: '120000', content: Buffer.from(h.linkname ?? '', 'utf8') });
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) throw new Error(`build context holds more than ${limits.maxBytes} bytes of code`);
        chunks.push(chunk);
      }
      files.push({ path, mode: ((h.mode ?? 0o644) & 0o111) !== 0 ? '100755' : '100644', content: Buffer.concat(chunks) });
    }
  })();
  await Promise.all([pipeline(tarGz, createGunzip(), extract), reading]);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
