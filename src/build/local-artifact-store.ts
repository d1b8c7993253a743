// ArtifactStore over a local directory, for `sless dev` and tests: one file per key. Writes go to a
// temporary file beside the target and are renamed into place, so a reader never sees half an object
// and a crash leaves at most a `.partial-*` file behind (skipped by list).
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ArtifactStoreError,
  checkArtifactKey,
  checkArtifactPrefix,
  type ArtifactStore,
  type ArtifactStoreErrorKind,
} from './artifact-store.ts';
import { compareCodeUnits } from './relative-paths.ts';

const PARTIAL = '.partial-';

export class LocalArtifactStore implements ArtifactStore {
  readonly location: string;
  private readonly root: string;

  constructor(options: { readonly dir: string }) {
    this.root = path.resolve(options.dir);
    this.location = `directory ${this.root}`;
  }

  async init(): Promise<void> {
    await mkdir(this.root, { recursive: true }).catch((err: unknown) => {
      throw this.fail(err, `cannot create the artifact directory ${this.root}`);
    });
  }

  async has(key: string): Promise<boolean> {
    try {
      return (await stat(this.file(key))).isFile();
    } catch (err) {
      if (code(err) === 'ENOENT') return false;
      throw this.fail(err, `cannot check "${key}" in ${this.location}`);
    }
  }

  async put(key: string, body: Readable): Promise<void> {
    const target = this.file(key);
    const temp = `${target}${PARTIAL}${randomBytes(6).toString('hex')}`;
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await pipeline(body, createWriteStream(temp));
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw this.fail(err, `cannot write "${key}" to ${this.location}`);
    }
  }

  async get(key: string): Promise<Readable> {
    const file = this.file(key);
    // Open eagerly so a missing key fails here, as NotFound, not later on the stream.
    const stream = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve()).once('error', reject);
    }).catch((err: unknown) => {
      throw this.fail(err, `cannot read "${key}" from ${this.location}`);
    });
    return stream;
  }

  /** A file: URL (no credential to hand out on this machine); `expiresInSec` does not apply. */
  async readUrl(key: string, _expiresInSec: number): Promise<string> {
    return pathToFileURL(this.file(key)).href;
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true }).catch((err: unknown) => {
      throw this.fail(err, `cannot delete "${key}" from ${this.location}`);
    });
  }

  async list(prefix: string): Promise<string[]> {
    checkArtifactPrefix(prefix, this.location);
    const keys: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(path.join(this.root, rel), { withFileTypes: true });
      } catch (err) {
        if (code(err) === 'ENOENT') return;
        throw this.fail(err, `cannot list "${prefix}" in ${this.location}`);
      }
      for (const e of entries) {
        const key = rel === '' ? e.name : `${rel}/${e.name}`;
        if (e.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || key.startsWith(prefix)) await walk(key);
        } else if (e.isFile() && key.startsWith(prefix) && !e.name.includes(PARTIAL)) keys.push(key);
      }
    };
    await walk('');
    return keys.sort(compareCodeUnits);
  }

  private file(key: string): string {
    return path.join(this.root, ...checkArtifactKey(key, this.location).split('/'));
  }

  private fail(err: unknown, message: string): ArtifactStoreError {
    if (err instanceof ArtifactStoreError) return err;
    const c = code(err);
    const kind: ArtifactStoreErrorKind =
      c === 'ENOENT' ? 'NotFound' : c === 'EACCES' || c === 'EPERM' ? 'Denied' : c === 'EISDIR' || c === 'ENOTDIR' ? 'Invalid' : 'Unavailable';
    return new ArtifactStoreError(kind, `${message}: ${c ?? (err as Error).message}`, { cause: err });
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
