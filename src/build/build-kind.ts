// Which builder a function's image needs, decided from its generated Dockerfile when its context is
// stored, and carried by the context's key (the Function's spec.s3Key), so the controller knows it
// without reading the context:
//   kaniko  the Dockerfile runs something (dependency installs, a Go build): a kaniko Job
//   layer   nothing runs (Node.js or Python without dependency files): the code becomes one layer on the
//           base image, appended by the build tools step (runtimes/build-tools/append.go), which reads
//           the same Dockerfile and unpacks nothing. Same image contents, without kaniko's unpacking of
//           the whole base image (most of such a build's time: push-to-serve bench).
//   dependencies  one stage that installs dependencies (Node.js or Python with dependency files): the
//           installs are an image of their own (`Dockerfile.dependencies`, dockerfile.ts
//           generateDependencyDockerfiles), built by kaniko only when the registry lacks it (its tag hashes
//           that Dockerfile and the dependency files), and the code is appended onto it as a layer build
//           does (`Dockerfile.code`). A code-only change runs no kaniko build.
export type BuildKind = 'kaniko' | 'layer' | 'dependencies';

const LAYER_SUFFIX = '.layer.tar.gz';
const DEPENDENCIES_SUFFIX = '.deps.tar.gz';

/** The context's Dockerfiles of a `dependencies` build, beside its `Dockerfile` (which kaniko alone builds). */
export const DEPENDENCY_DOCKERFILES = { dependencies: 'Dockerfile.dependencies', code: 'Dockerfile.code' } as const;

/** `layer` when the Dockerfile has no RUN and one stage; anything else is kaniko's. */
export function buildKindOfDockerfile(dockerfile: string): BuildKind {
  const stages = dockerfile.match(/^FROM\s/gim)?.length ?? 0;
  return stages === 1 && !/^RUN\s/im.test(dockerfile) ? 'layer' : 'kaniko';
}

/** The stored context's key for a build of `kind`: `contexts/<sha>.tar.gz` (kaniko), `.layer.tar.gz` or `.deps.tar.gz`. */
export function contextKeyOfKind(key: string, kind: BuildKind): string {
  if (kind === 'kaniko') return key;
  return key.replace(/\.tar\.gz$/, kind === 'layer' ? LAYER_SUFFIX : DEPENDENCIES_SUFFIX);
}

/**
 * What contextKeyOfKind encoded; any other key (the old system's, an upload's) is built by kaniko, and so
 * is every key when the operator turned layer builds off (`layers: false`, SLESS_LAYER_BUILDS): both
 * kinds' contexts hold the whole `Dockerfile` at their root, so kaniko builds any of them as well.
 */
export function buildKindOfContextKey(key: string, options: { readonly layers?: boolean } = {}): BuildKind {
  if (options.layers === false || !key.startsWith('contexts/')) return 'kaniko';
  if (key.endsWith(LAYER_SUFFIX)) return 'layer';
  return key.endsWith(DEPENDENCIES_SUFFIX) ? 'dependencies' : 'kaniko';
}
