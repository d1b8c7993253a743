// Puts one function's build context (its code under function/, the generated Dockerfile at the root) into
// the artifact store under a content-addressed key, unless that key is already there. Used by the
// repository sync (code from a git tree) and usable for /v1 uploads (code from a zip) alike.
import type { ArtifactStore } from '../../build/artifact-store.ts';
import { buildKindOfDockerfile, contextKeyOfKind, DEPENDENCY_DOCKERFILES, type BuildKind } from '../../build/build-kind.ts';
import { buildContextTar, contextKey, type ContextExtra, type ContextFile } from '../../build/context-tar.ts';
import { generateDependencyDockerfiles, generateDockerfile } from '../../build/dockerfile.ts';
import { functionFilesOf } from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';
import type { CodeFile } from '../types.ts';

export interface ContextInput {
  readonly runtime: Runtime;
  readonly entrypoint: string;
  readonly buildKey: string;
  readonly baseImage: string;
  /** Hash paths of the function's files (relative to its folder; "/"+repo path for included files). */
  readonly paths: readonly string[];
  /** Reads the files' contents (bytes, or streamed from disk as the tar is written); called only when
   * the context must be uploaded. */
  readonly files: () => AsyncIterable<CodeFile | ContextFile> | Iterable<CodeFile | ContextFile>;
}

/** The Dockerfile decides the key, and the dependency files at the function's root decide the Dockerfile. */
export function contextDockerfile(input: Pick<ContextInput, 'runtime' | 'entrypoint' | 'baseImage' | 'paths'>): string {
  return generateDockerfile(
    { runtime: input.runtime, entrypoint: input.entrypoint },
    { baseImage: input.baseImage, ...functionFilesOf(input.paths) },
  );
}

/**
 * The Dockerfiles at the context's root and the builder they call for: `Dockerfile` always (what kaniko
 * builds, also when layer builds are off), and for a function that installs dependencies its two halves
 * (`dependencies` build kind: the dependencies image once, the code appended onto it).
 */
export function contextDockerfiles(input: Pick<ContextInput, 'runtime' | 'entrypoint' | 'baseImage' | 'paths'>): { kind: BuildKind; files: ContextExtra[] } {
  const dockerfile = contextDockerfile(input);
  const split = generateDependencyDockerfiles(
    { runtime: input.runtime, entrypoint: input.entrypoint },
    { baseImage: input.baseImage, ...functionFilesOf(input.paths) },
  );
  const files = [{ path: 'Dockerfile', content: dockerfile }];
  if (!split) return { kind: buildKindOfDockerfile(dockerfile), files };
  return {
    kind: 'dependencies',
    files: [...files, { path: DEPENDENCY_DOCKERFILES.dependencies, content: split.dependencies }, { path: DEPENDENCY_DOCKERFILES.code, content: split.code }],
  };
}

/** Included files keep their repository path inside the code folder, as `sless dev` places them. */
async function* asContextFiles(files: AsyncIterable<CodeFile | ContextFile> | Iterable<CodeFile | ContextFile>): AsyncGenerator<ContextFile> {
  for await (const f of files) yield { path: f.path.replace(/^\/+/, ''), mode: f.mode, content: f.content };
}

export async function ensureContext(store: ArtifactStore, input: ContextInput): Promise<{ key: string; uploaded: boolean }> {
  const { kind, files: extra } = contextDockerfiles(input);
  // The key says which builder the Dockerfiles need (build-kind.ts): the build Job follows it.
  const key = contextKeyOfKind(contextKey(input.buildKey, extra), kind);
  if (await store.has(key)) return { key, uploaded: false };
  await store.put(key, buildContextTar(asContextFiles(input.files()), extra), { contentType: 'application/gzip' });
  return { key, uploaded: true };
}
