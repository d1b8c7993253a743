// Where build contexts (and other build artifacts) are kept between the controller and the builder:
// S3 in a cluster (a build reads its context through a presigned URL), a directory for `sless dev`. Keys are relative
// posix paths such as `contexts/<sha256>.tar.gz` (see contextKey in context-tar.ts); being
// content-addressed, an existing key never needs writing again, so callers ask `has` first.
import type { Readable } from 'node:stream';
import { isCleanRelativePath } from './relative-paths.ts';

export interface PutOptions {
  /** Stored with the object where the store supports it; default `application/octet-stream`. */
  readonly contentType?: string;
}

export interface ArtifactStore {
  /** A description for logs and errors, without credentials (e.g. `s3://bucket at http://host:8333`). */
  readonly location: string;
  /** Makes the store ready (S3: checks or creates the bucket). Throws ArtifactStoreError. */
  init(): Promise<void>;
  has(key: string): Promise<boolean>;
  /** Streams `body` (any length, unknown in advance) to `key`; replaces an existing object. */
  put(key: string, body: Readable, options?: PutOptions): Promise<void>;
  /** Throws ArtifactStoreError with kind `NotFound` when the key is absent. */
  get(key: string): Promise<Readable>;
  /**
   * A URL that reads `key` without any other credential, valid for `expiresInSec` seconds (S3: a presigned
   * GET). A build is handed this instead of the store's keys, so it can read its own context and nothing else.
   */
  readUrl(key: string, expiresInSec: number): Promise<string>;
  /** Deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /** Every key starting with `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
}

/**
 * - `NotFound`: the key does not exist.
 * - `Unavailable`: the store could not be reached or answered with a server error; retry later.
 * - `Denied`: credentials or permissions were refused; retrying will not help until they are fixed.
 * - `Invalid`: a bad key or request; a bug or a misconfiguration.
 */
export type ArtifactStoreErrorKind = 'NotFound' | 'Unavailable' | 'Denied' | 'Invalid';

export class ArtifactStoreError extends Error {
  override readonly name = 'ArtifactStoreError';
  constructor(
    readonly kind: ArtifactStoreErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isArtifactStoreError(err: unknown, kind?: ArtifactStoreErrorKind): err is ArtifactStoreError {
  return err instanceof ArtifactStoreError && (kind === undefined || err.kind === kind);
}

/** Keys are relative posix paths without `.`/`..`/empty segments; anything else is a bug upstream. */
export function checkArtifactKey(key: string, location: string): string {
  if (!isCleanRelativePath(key)) {
    throw new ArtifactStoreError('Invalid', `artifact key "${key}" for ${location} is not a clean relative posix path`);
  }
  return key;
}

/** Same check for list prefixes, where empty and a trailing `/` are fine. */
export function checkArtifactPrefix(prefix: string, location: string): string {
  if (prefix === '') return prefix;
  checkArtifactKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix, location);
  return prefix;
}
