// The build context a kaniko Job (or `sless dev`) builds from: one tar.gz holding the function's code
// under `function/` and generated files (the Dockerfile) at the root. It is deterministic: entries
// sorted by path, every parent directory listed once, fixed mtime/owners, modes reduced to what git
// knows (0644, 0755, symlink) and a gzip header without time or OS, so equal inputs give equal bytes
// on the same Node release. (Different zlib builds may deflate differently, which is why the
// artifact key is derived from the build inputs, not from these bytes: see contextKey below.)
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';
import { pack as createPack, type Header, type Pack } from 'tar-stream';
import { linkLayoutProblems } from '../source/link-layout.ts';
import type { FileMode } from '../source/types.ts';
import { compareCodeUnits, isCleanRelativePath } from './relative-paths.ts';

export interface ContextFile {
  /** Posix path relative to the function's code root. */
  readonly path: string;
  readonly mode: FileMode;
  /** File bytes; for a symlink (`120000`) the link target (always bytes). */
  readonly content: Buffer | StreamedContent;
}

/** File bytes read only when their entry is written, so a context holds one file's chunks at a time
 * (an upload that inflates to hundreds of megabytes is packed from disk, not from memory). */
export interface StreamedContent {
  /** Exact byte count: the tar header is written before the bytes. */
  readonly size: number;
  open(): Readable;
}

function isStreamed(content: Buffer | StreamedContent): content is StreamedContent {
  return !Buffer.isBuffer(content);
}

export interface ContextExtra {
  /** Posix path relative to the context root, e.g. `Dockerfile`. */
  readonly path: string;
  readonly content: Buffer | string;
  /** Default `100644`. */
  readonly mode?: Exclude<FileMode, '120000'>;
}

export interface ContextTarOptions {
  /** Folder inside the context that holds the function's code; default `function`. */
  readonly codeDir?: string;
}

/** Where the function's code lands inside the context unless told otherwise. */
export const DEFAULT_CODE_DIR = 'function';

/** Every entry's mtime: the epoch, so the same files always give the same headers. */
const FIXED_MTIME = new Date(0);
/** RFC 1952 OS byte for "Unix", written whatever platform zlib was built for. */
const GZIP_OS_UNIX = 3;

interface Entry {
  readonly path: string;
  readonly mode: FileMode | 'dir';
  readonly content: Buffer | StreamedContent;
}

/** Builds the gzip-compressed context; errors (bad paths, a failing source) arrive on the stream. */
export function buildContextTar(
  files: AsyncIterable<ContextFile> | Iterable<ContextFile>,
  extra: readonly ContextExtra[] = [],
  options: ContextTarOptions = {},
): Readable {
  const pack = createPack();
  const gzip = createGzip({ level: constants.Z_BEST_COMPRESSION });
  const out = new Transform({ transform: fixGzipOsByte() });
  void (async () => {
    const entries = await collectEntries(files, extra, options.codeDir ?? DEFAULT_CODE_DIR);
    const writing = (async () => {
      for (const entry of entries) await writeEntry(pack, entry);
      pack.finalize();
    })();
    // Either side may fail first (e.g. the reader gives up): whichever does ends the stream.
    await Promise.all([pipeline(pack, gzip, out), writing]);
  })().catch((err: unknown) => {
    pack.destroy();
    out.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return out;
}

async function collectEntries(
  files: AsyncIterable<ContextFile> | Iterable<ContextFile>,
  extra: readonly ContextExtra[],
  codeDir: string,
): Promise<Entry[]> {
  const byPath = new Map<string, Entry>();
  const add = (entry: Entry, origin: string) => {
    if (byPath.has(entry.path)) {
      throw new Error(`build context: two entries for "${entry.path}" (${origin}); every path must be unique`);
    }
    byPath.set(entry.path, entry);
  };
  const prefix = codeDir === '' ? '' : `${checkPath(codeDir, 'codeDir')}/`;
  const code: ContextFile[] = [];
  for await (const f of files) {
    add({ path: prefix + checkPath(f.path, 'function file'), mode: f.mode, content: f.content }, 'function file');
    code.push(f);
  }
  // The builder unpacks this tar: no entry may be written through a link or resolve out of the folder.
  const links = linkLayoutProblems(code.map((f) => ({ path: f.path, mode: f.mode, target: f.mode === '120000' ? linkTarget(f) : undefined })));
  if (links.length > 0) throw new Error(`build context: ${links.map((p) => p.message).join('; ')}`);
  for (const x of extra) {
    const content = typeof x.content === 'string' ? Buffer.from(x.content) : x.content;
    add({ path: checkPath(x.path, 'extra file'), mode: x.mode ?? '100644', content }, 'generated file');
  }
  const dirs = new Set<string>();
  for (const p of byPath.keys()) {
    for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) dirs.add(p.slice(0, i));
  }
  for (const d of dirs) {
    const clash = byPath.get(d);
    if (clash) throw new Error(`build context: "${d}" is both a file and a directory; rename one of them`);
    byPath.set(d, { path: d, mode: 'dir', content: Buffer.alloc(0) });
  }
  // Directories sort as `name/`, like git trees, so each comes right before its own contents.
  return [...byPath.values()].sort((a, b) => compareCodeUnits(tarName(a), tarName(b)));
}

function linkTarget(entry: Pick<Entry, 'path' | 'content'>): string {
  if (isStreamed(entry.content)) throw new Error(`build context: the symlink "${entry.path}" must carry its target as bytes`);
  return entry.content.toString('utf8');
}

function tarName(entry: Entry): string {
  return entry.mode === 'dir' ? `${entry.path}/` : entry.path;
}

/** A relative posix path without `.`/`..`/empty segments, or an error naming it. */
function checkPath(p: string, what: string): string {
  if (!isCleanRelativePath(p)) {
    throw new Error(`build context: ${what} path "${p}" is not a clean relative posix path (no leading /, no . or .. segments)`);
  }
  return p;
}

function writeEntry(pack: Pack, entry: Entry): Promise<void> {
  const common = { mtime: FIXED_MTIME, uid: 0, gid: 0, uname: '', gname: '' } satisfies Partial<Header>;
  switch (entry.mode) {
    case 'dir':
      return packEntry(pack, { ...common, name: tarName(entry), type: 'directory', mode: 0o755 });
    case '120000':
      return packEntry(pack, { ...common, name: entry.path, type: 'symlink', mode: 0o777, linkname: linkTarget(entry) });
    default: {
      const header = { ...common, name: entry.path, type: 'file', mode: entry.mode === '100755' ? 0o755 : 0o644 } as const;
      const content = entry.content;
      if (!isStreamed(content)) return packEntry(pack, header, content);
      // tar-stream fails the entry when the bytes differ from the size (a file changed while packing).
      return new Promise((resolve, reject) => {
        const sink = pack.entry({ ...header, size: content.size }, (err) => (err ? reject(err) : resolve()));
        pipeline(content.open(), sink).catch(reject);
      });
    }
  }
}

function packEntry(pack: Pack, header: Partial<Header> & { name: string }, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (body) pack.entry(header, body, done);
    else pack.entry(header, done);
  });
}

/** zlib writes its build platform's OS code into byte 9 of the gzip header; pin it. */
function fixGzipOsByte(): (chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) => void {
  let offset = 0;
  return (chunk, _enc, cb) => {
    if (offset <= 9 && offset + chunk.length > 9) {
      chunk = Buffer.from(chunk);
      chunk[9 - offset] = GZIP_OS_UNIX;
    }
    offset += chunk.length;
    cb(null, chunk);
  };
}

/** Bump when the context layout or encoding changes, so old stored contexts are not reused. */
const CONTEXT_FORMAT = 'sless-context-v1';

/**
 * The artifact key of a context: `contexts/<sha256>.tar.gz` over the build key (code_hash + runtime +
 * base image, as the caller defines it), the code folder, the generated files and the format
 * version. It is known before the tar is made, so a caller can ask the store `has(key)` and skip
 * both packing and uploading; equal keys mean equal context contents.
 */
export function contextKey(buildKey: string, extra: readonly ContextExtra[] = [], options: ContextTarOptions = {}): string {
  const h = createHash('sha256');
  const field = (s: string | Buffer) => {
    h.update(`${Buffer.byteLength(s)}:`);
    h.update(s);
  };
  field(CONTEXT_FORMAT);
  field(buildKey);
  field(options.codeDir ?? DEFAULT_CODE_DIR);
  for (const x of [...extra].sort((a, b) => compareCodeUnits(a.path, b.path))) {
    field(x.path);
    field(x.mode ?? '100644');
    field(x.content);
  }
  return `contexts/${h.digest('hex')}.tar.gz`;
}
