// An uploaded zip -> its files unpacked on disk (UnpackedCode), refusing anything that could escape
// the function's folder or blow up memory or disk: limits on the compressed size (checked by the
// caller's body limit and here), on the uncompressed size (counted while inflating, never trusting
// the headers), and on the entry count; absolute paths, ".." segments, duplicate paths and symlinks
// pointing outside are refused. Entries stream to disk as they inflate (no file is held in memory),
// each regular file created exclusively (O_EXCL) while no link exists yet; links come last, once
// the whole layout is checked (src/source/link-layout.ts), so writing never follows a link.
// A zip whose files all sit under one top folder (what "compress this folder" makes) has that folder
// stripped, so `zip -r f.zip hello/` and `cd hello && zip -r ../f.zip .` upload the same code.
// `__MACOSX/` metadata is skipped. Unix modes come from the external attributes (made on Unix).
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readFile, readlink, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import type { CodeFile, UnpackedCode } from '../platform/types.ts';
import { blobOid, hashOids, IGNORE_FILE } from '../source/code-hash.ts';
import { IgnorePatternError } from '../source/ignore-rules.ts';
import { linkLayoutProblems } from '../source/link-layout.ts';
import { DEFAULT_TREE_LIMITS, TreeBudget, TreeLimitError } from '../source/tree-limits.ts';
import { readUnpacked } from '../platform/read-unpacked.ts';

export interface ZipLimits {
  readonly compressedBytes: number;
  readonly uncompressedBytes: number;
  readonly entries: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  compressedBytes: 50 * 1024 * 1024,
  uncompressedBytes: 250 * 1024 * 1024,
  entries: 10_000,
};

/** A zip the server refuses; the message tells the uploader what to fix. */
export class ZipError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ZipError';
  }
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;

/** The longest symlink target accepted (PATH_MAX): a link's target is read into memory. */
const MAX_LINK_TARGET = 4096;
/** .slessignore is read into memory to hash the code; a bigger one is refused. */
const MAX_IGNORE_FILE = 1024 * 1024;

type UnpackedFile = UnpackedCode['files'][number];

/**
 * Unpacks `buffer` into a new folder under `into` (created when missing). On any refusal the
 * folder is removed and a ZipError says why; on success the caller owns `dir`.
 */
export async function unpackZip(buffer: Buffer, into: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<UnpackedCode> {
  if (buffer.length > limits.compressedBytes) {
    throw new ZipError(`the zip is ${buffer.length} bytes; the limit is ${limits.compressedBytes}`, true);
  }
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(buffer, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (err, z) =>
      err || !z ? reject(new ZipError(`not a readable zip file: ${err?.message ?? 'unknown error'}`, false, { cause: err })) : resolve(z),
    ),
  );
  if (zip.entryCount > limits.entries) {
    zip.close();
    throw new ZipError(`the zip has ${zip.entryCount} entries; the limit is ${limits.entries}`, true);
  }
  await mkdir(into, { recursive: true });
  const dir = await mkdtemp(path.join(into, 'upload-'));
  const tree = path.join(dir, 'tree');
  try {
    const files: UnpackedFile[] = [];
    const links = new Map<string, string>();
    const seen = new Set<string>();
    // The same bounds on depth, path length and listing size as a repository's revision.
    const shape = new TreeBudget(DEFAULT_TREE_LIMITS);
    let total = 0;
    try {
      for await (const entry of entries(zip)) {
        // Names are decoded here (decodeStrings: false) so that safePath, not yauzl, explains a refusal.
        const rawName: unknown = entry.fileName;
        const name = Buffer.isBuffer(rawName) ? rawName.toString('utf8') : String(rawName);
        if (name.startsWith('__MACOSX/')) continue;
        const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
        const isDir = name.endsWith('/') || (unixMode & S_IFMT) === S_IFDIR;
        const safe = safePath(name);
        if (isDir) continue;
        shape.path(safe);
        if (seen.has(safe)) throw new ZipError(`the zip holds "${safe}" twice`);
        seen.add(safe);
        if (entry.uncompressedSize > limits.uncompressedBytes - total) {
          throw new ZipError(`the zip unpacks to more than ${limits.uncompressedBytes} bytes (at ${safe})`, true);
        }
        if ((unixMode & S_IFMT) === S_IFLNK) {
          const target = await inflate(zip, entry, Math.min(MAX_LINK_TARGET, limits.uncompressedBytes - total), safe, (chunks) => collect(chunks));
          total += target.length;
          links.set(safe, target.toString('utf8'));
          files.push({ path: safe, mode: '120000', oid: blobOid(target), size: target.length });
          continue;
        }
        const mode = unixMode & 0o111 ? '100755' : '100644';
        const written = await inflate(zip, entry, limits.uncompressedBytes - total, safe, (chunks) =>
          writeNew(path.join(tree, ...safe.split('/')), mode, entry.uncompressedSize, chunks, safe),
        );
        total += written.size;
        files.push({ path: safe, mode, oid: written.oid, size: written.size });
      }
    } finally {
      zip.close();
    }
    if (files.length === 0) throw new ZipError('the zip holds no files');
    const top = commonTop(files.map((f) => f.path));
    const strip = (p: string) => (top ? p.slice(top.length + 1) : p);
    const code = files.map((f) => ({ ...f, path: strip(f.path) }));
    const problems = linkLayoutProblems(code.map((f) => ({ path: f.path, mode: f.mode, target: f.mode === '120000' ? links.get(top ? `${top}/${f.path}` : f.path) : undefined })));
    if (problems.length > 0) throw new ZipError(problems.map((p) => p.message).join('; '));
    const root = top ? path.join(tree, top) : tree;
    await mkdir(root, { recursive: true });
    for (const [p, target] of links) {
      const abs = path.join(root, ...strip(p).split('/'));
      await mkdir(path.dirname(abs), { recursive: true });
      await symlink(target, abs);
    }
    return { dir, root, files: code, codeHash: hashOids(code, [], await readIgnoreFile(root, code)) };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof ZipError) throw err;
    if (err instanceof IgnorePatternError) throw new ZipError(`the zip's ${err.message}`, false, { cause: err });
    if (err instanceof TreeLimitError) throw new ZipError(`the zip is refused (${err.reason}): ${err.message}`, false, { cause: err });
    throw new ZipError(`cannot unpack the zip: ${(err as Error).message}`, false, { cause: err });
  }
}

/** A zip's files in memory (for small zips: tests, clients reading back GET .../source). */
export async function readZip(buffer: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<CodeFile[]> {
  const code = await unpackZip(buffer, os.tmpdir(), limits);
  try {
    const out: CodeFile[] = [];
    for await (const f of readUnpacked(code)) out.push(f);
    return out;
  } finally {
    await rm(code.dir, { recursive: true, force: true });
  }
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** Streams an entry into a new file (O_EXCL: never onto, or through, something already there). */
async function writeNew(abs: string, mode: '100644' | '100755', declared: number, chunks: AsyncIterable<Buffer>, name: string): Promise<{ oid: string; size: number }> {
  // Parents are plain folders: no link exists on disk until every file is written.
  await mkdir(path.dirname(abs), { recursive: true }).catch((err: unknown) => {
    throw new ZipError(`the zip entry "${name}" sits under a path the zip also holds as a file`, false, { cause: err });
  });
  // git's blob id: the header needs the size up front; inflate() holds the entry to its declared size.
  const hash = createHash('sha1').update(`blob ${declared}\0`);
  let size = 0;
  const counted = async function* (src: AsyncIterable<Buffer>) {
    for await (const c of src) {
      size += c.length;
      hash.update(c);
      yield c;
    }
  };
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(abs, flags, mode === '100755' ? 0o755 : 0o644).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'EISDIR' || code === 'ENOTDIR') {
      throw new ZipError(`the zip holds "${name}" both as a file and as a folder`, false, { cause: err });
    }
    throw err;
  });
  // The stream closes the handle when it ends or fails.
  await pipeline(chunks, counted, handle.createWriteStream());
  if (mode === '100755') await chmod(abs, 0o755);
  return { oid: hash.digest('hex'), size };
}

function entries(zip: yauzl.ZipFile): AsyncIterable<yauzl.Entry> {
  return {
    [Symbol.asyncIterator]() {
      return {
        next: () =>
          new Promise<IteratorResult<yauzl.Entry>>((resolve, reject) => {
            const cleanup = () => {
              zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
            };
            const onEntry = (e: yauzl.Entry) => (cleanup(), resolve({ value: e, done: false }));
            const onEnd = () => (cleanup(), resolve({ value: undefined, done: true }));
            const onError = (err: Error) => (cleanup(), reject(new ZipError(`the zip is corrupt: ${err.message}`, false, { cause: err })));
            zip.once('entry', onEntry).once('end', onEnd).once('error', onError);
            zip.readEntry();
          }),
      };
    },
  };
}

/**
 * Inflates one entry into `consume`, counting real bytes so a lying header cannot smuggle a zip bomb
 * through: yauzl (validateEntrySizes) fails an entry that inflates past its declared size before
 * handing over the extra bytes, the bound here holds even if it did not, and a short entry fails too.
 */
async function inflate<T>(zip: yauzl.ZipFile, entry: yauzl.Entry, budget: number, name: string, consume: (chunks: AsyncIterable<Buffer>) => Promise<T>): Promise<T> {
  const declared = entry.uncompressedSize;
  if (declared > budget) throw new ZipError(`the zip unpacks to more than the allowed size (at ${name})`, true);
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) =>
      err || !s ? reject(new ZipError(`cannot read ${name} from the zip: ${err?.message ?? 'unknown'}`, false, { cause: err })) : resolve(s),
    ),
  );
  // Errors reach the consumer through the iteration below; one yauzl emits after that (its size
  // check, once the bound here stopped reading) must not crash the process.
  stream.on('error', () => {});
  const bomb = () => new ZipError(`the zip entry ${name} inflates to more bytes than its header declares (a zip bomb?)`, true);
  async function* bounded(): AsyncGenerator<Buffer> {
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > declared) throw bomb();
      yield chunk;
    }
    if (size !== declared) throw new ZipError(`the zip entry ${name} holds ${size} bytes but its header says ${declared}`);
  }
  try {
    return await consume(bounded());
  } catch (err) {
    stream.destroy();
    if (err instanceof ZipError) throw err;
    if (/too many bytes/.test((err as Error).message)) throw new ZipError(bomb().message, true, { cause: err });
    throw new ZipError(`cannot inflate ${name}: ${(err as Error).message}`, false, { cause: err });
  }
}

/** A normalized relative posix path, or a ZipError saying why the name is refused. */
export function safePath(name: string): string {
  const slashed = name.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) {
    throw new ZipError(`the zip entry "${name}" has an absolute path; entries must be relative`);
  }
  const parts = slashed.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new ZipError(`the zip entry "${name}" contains ".."; entries must stay inside the folder`);
  if (parts.length === 0) throw new ZipError(`the zip has an entry with an empty name`);
  if (parts.includes('.git')) throw new ZipError(`the zip entry "${name}" is inside .git; leave git metadata out`);
  return parts.join('/');
}

/** The one top folder every path sits under, if there is one (and no file sits beside it). */
function commonTop(paths: readonly string[]): string | undefined {
  const tops = new Set(paths.map((p) => p.split('/')[0]));
  const [top] = tops;
  if (paths.length === 0 || tops.size !== 1 || paths.some((p) => !p.includes('/'))) return undefined;
  return top;
}

/** The top-level .slessignore's text (it decides which files count for code_hash), if any. */
async function readIgnoreFile(root: string, files: readonly UnpackedFile[]): Promise<string | undefined> {
  const f = files.find((x) => x.path === IGNORE_FILE);
  if (!f) return undefined;
  // As for hashFiles: a link's content is its target.
  if (f.mode === '120000') return readlink(path.join(root, IGNORE_FILE));
  if (f.size > MAX_IGNORE_FILE) throw new ZipError(`the zip's ${IGNORE_FILE} is ${f.size} bytes; at most ${MAX_IGNORE_FILE} are read`);
  return readFile(path.join(root, IGNORE_FILE), 'utf8');
}
