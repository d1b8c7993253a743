// An uploaded zip -> CodeFile[], refusing anything that could escape the function's folder or blow
// up memory: limits on the compressed size (checked by the caller's body limit and here), on the
// uncompressed size (counted while inflating, never trusting the headers), and on the entry count;
// absolute paths, ".." segments, duplicate paths and symlinks pointing outside are refused.
// A zip whose files all sit under one top folder (what "compress this folder" makes) has that folder
// stripped, so `zip -r f.zip hello/` and `cd hello && zip -r ../f.zip .` upload the same code.
// `__MACOSX/` metadata is skipped. Unix modes come from the external attributes (made on Unix).
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { CodeFile } from '../platform/types.ts';
import { linkLayoutProblems } from '../source/link-layout.ts';

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

export async function readZip(buffer: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<CodeFile[]> {
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
  const files: CodeFile[] = [];
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
      if (entry.uncompressedSize > limits.uncompressedBytes - total) {
        throw new ZipError(`the zip unpacks to more than ${limits.uncompressedBytes} bytes (at ${safe})`, true);
      }
      const content = await readEntry(zip, entry, limits.uncompressedBytes - total, safe);
      total += content.length;
      const isLink = (unixMode & S_IFMT) === S_IFLNK;
      files.push({ path: safe, mode: isLink ? '120000' : unixMode & 0o111 ? '100755' : '100644', content });
    }
  } finally {
    zip.close();
  }
  return checkLinks(stripCommonTop(rejectDuplicates(files)));
}

/** Links must resolve inside the folder, through each other too, and nothing may sit under one. */
function checkLinks(files: CodeFile[]): CodeFile[] {
  const problems = linkLayoutProblems(files.map((f) => ({ path: f.path, mode: f.mode, target: f.mode === '120000' ? f.content.toString('utf8') : undefined })));
  if (problems.length > 0) throw new ZipError(problems.map((p) => p.message).join('; '));
  return files;
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

/** Inflates one entry, counting real bytes so a lying header cannot smuggle a zip bomb through. */
async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, budget: number, name: string): Promise<Buffer> {
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) =>
      err || !s ? reject(new ZipError(`cannot read ${name} from the zip: ${err?.message ?? 'unknown'}`, false, { cause: err })) : resolve(s),
    ),
  );
  // One buffer of the declared size, filled in place: no chunk list and no second copy on concat.
  // yauzl (validateEntrySizes) fails an entry that inflates past its declared size before handing
  // over the extra bytes; the bound below holds even if it did not.
  const declared = entry.uncompressedSize;
  if (declared > budget) throw new ZipError(`the zip unpacks to more than the allowed size (at ${name})`, true);
  const out = Buffer.allocUnsafe(declared);
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (size + chunk.length > declared) throw new ZipError(`the zip entry ${name} inflates to more bytes than its header declares (a zip bomb?)`, true);
      chunk.copy(out, size);
      size += chunk.length;
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof ZipError) throw err;
    if (/too many bytes/.test((err as Error).message)) {
      throw new ZipError(`the zip entry ${name} inflates to more bytes than its header declares (a zip bomb?)`, true, { cause: err });
    }
    throw new ZipError(`cannot inflate ${name}: ${(err as Error).message}`, false, { cause: err });
  }
  return size === declared ? out : out.subarray(0, size);
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

function rejectDuplicates(files: CodeFile[]): CodeFile[] {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new ZipError(`the zip holds "${f.path}" twice`);
    seen.add(f.path);
  }
  return files;
}

function stripCommonTop(files: CodeFile[]): CodeFile[] {
  const tops = new Set(files.map((f) => f.path.split('/')[0]));
  const [top] = tops;
  if (files.length === 0 || tops.size !== 1 || files.some((f) => !f.path.includes('/'))) return files;
  return files.map((f) => ({ ...f, path: f.path.slice(`${top}/`.length) }));
}
