// Puts one function's build context (its code under function/, the generated Dockerfile at the root) into
// the artifact store under a content-addressed key, unless that key is already there. Used by the
// repository sync (code from a git tree) and usable for /v1 uploads (code from a zip) alike.
import type { ArtifactStore } from '../../build/artifact-store.ts';
import { buildKindOfDockerfile, contextKeyOfKind } from '../../build/build-kind.ts';
import { buildContextTar, contextKey, type ContextFile } from '../../build/context-tar.ts';
import { generateDockerfile } from '../../build/dockerfile.ts';
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

/** Included files keep their repository path inside the code folder, as `sless dev` places them. */
async function* asContextFiles(files: AsyncIterable<CodeFile | ContextFile> | Iterable<CodeFile | ContextFile>): AsyncGenerator<ContextFile> {
  for await (const f of files) yield { path: f.path.replace(/^\/+/, ''), mode: f.mode, content: f.content };
}

export async function ensureContext(store: ArtifactStore, input: ContextInput): Promise<{ key: string; uploaded: boolean }> {
  const dockerfile = contextDockerfile(input);
  const extra = [{ path: 'Dockerfile', content: dockerfile }];
  // The key says which builder the Dockerfile needs (build-kind.ts): the build Job follows it.
  const key = contextKeyOfKind(contextKey(input.buildKey, extra), buildKindOfDockerfile(dockerfile));
  if (await store.has(key)) return { key, uploaded: false };
  await store.put(key, buildContextTar(asContextFiles(input.files()), extra), { contentType: 'application/gzip' });
  return { key, uploaded: true };
}
