// A /v1 function's code on Kubernetes: uploaded files become a build context in the artifact store (the
// same one the controller's builds read), and the stored context reads back as files for GET .../source.
import type { ArtifactStore } from '../../build/artifact-store.ts';
import { isArtifactStoreError } from '../../build/artifact-store.ts';
import { baseImageOf } from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';
import { PlatformError, type CodeFile, type UnpackedCode } from '../types.ts';
import { contextDockerfile, ensureContext } from './build-context.ts';
import { buildKey } from './objects/build-key.ts';
import type { FunctionResource } from './objects/resources.ts';
import { hashFiles } from '../../source/code-hash.ts';
import { IgnorePatternError } from '../../source/ignore-rules.ts';
import { readContextCode } from './read-context.ts';
import { streamUnpacked } from '../read-unpacked.ts';
import { functionSpecDefaults } from './objects/crd-defaults.ts';

/** The Function spec fields that point to its code. */
export interface CodeRef {
  readonly codeHash: string;
  readonly s3Bucket: string;
  readonly s3Key: string;
}

export class FunctionCode {
  constructor(
    private readonly store: ArtifactStore,
    private readonly settings: { readonly runtimeImagePrefix: string; readonly bucket: string },
  ) {}

  /** The bucket new code goes to (and old Functions without s3Bucket are read from). */
  get bucket(): string {
    return this.settings.bucket;
  }

  /** Puts the build context for the code (an upload unpacked on disk, read a file at a time, or files) in the store, unless its key is there, and answers the spec fields that point to it. */
  async save(namespace: string, name: string, spec: NonNullable<FunctionResource['spec']>, code: UnpackedCode | readonly CodeFile[]): Promise<CodeRef> {
    const runtime = spec.runtime as Runtime;
    const { entrypoint } = functionSpecDefaults(spec);
    const unpacked = isUnpacked(code) ? code : undefined;
    const codeHash = unpacked ? unpacked.codeHash : hashCode(namespace, name, code as readonly CodeFile[]);
    const baseImage = baseImageOf(runtime, this.settings.runtimeImagePrefix);
    const paths = (unpacked ? unpacked.files : (code as readonly CodeFile[])).map((f) => f.path);
    try {
      contextDockerfile({ runtime, entrypoint, baseImage, paths });
    } catch (err) {
      throw new PlatformError('invalid', `function ${namespace}/${name} cannot be built: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    try {
      const { key } = await ensureContext(this.store, {
        runtime,
        entrypoint,
        buildKey: buildKey({ codeHash, runtime, baseImage }),
        baseImage,
        paths,
        files: () => (unpacked ? streamUnpacked(unpacked) : (code as readonly CodeFile[])),
      });
      return { codeHash, s3Bucket: this.settings.bucket, s3Key: key };
    } catch (err) {
      throw new PlatformError(
        'unavailable',
        `storing the code of function ${namespace}/${name} in ${this.store.location} failed: ${err instanceof Error ? err.message : String(err)}; retry the upload`,
        { cause: err },
      );
    }
  }

  /** The files of the function's stored build context. */
  async read(fn: FunctionResource): Promise<CodeFile[]> {
    const what = `function ${fn.metadata?.namespace ?? ''}/${fn.metadata?.name ?? ''}`;
    const key = fn.spec?.s3Key;
    if (!key) throw new PlatformError('not_found', `${what} has no code yet: upload a zip first`);
    try {
      return await readContextCode(await this.store.get(key));
    } catch (err) {
      if (isArtifactStoreError(err, 'NotFound')) {
        throw new PlatformError('not_found', `the code of ${what} (${key}) is no longer in ${this.store.location}; upload it again`, { cause: err });
      }
      throw new PlatformError('unavailable', `reading the code of ${what} from ${this.store.location} failed: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  }
}

function isUnpacked(code: UnpackedCode | readonly CodeFile[]): code is UnpackedCode {
  return !Array.isArray(code);
}

/** code_hash of code given as files; refused ignore patterns (.slessignore) are the caller's error. */
function hashCode(namespace: string, name: string, files: readonly CodeFile[]): string {
  try {
    return hashFiles(files);
  } catch (err) {
    if (err instanceof IgnorePatternError) throw new PlatformError('invalid', `function ${namespace}/${name}: ${err.message}`, { cause: err });
    throw err;
  }
}
