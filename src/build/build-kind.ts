// Which builder a function's image needs, decided from its generated Dockerfile when its context is
// stored, and carried by the context's key (the Function's spec.s3Key), so the controller knows it
// without reading the context:
//   kaniko  the Dockerfile runs something (dependency installs, a Go build): a kaniko Job
//   layer   nothing runs (Node.js or Python without dependency files): the code becomes one layer on the
//           base image, appended by the build tools step (runtimes/build-tools/append.go), which reads
//           the same Dockerfile and unpacks nothing. Same image contents, without kaniko's unpacking of
//           the whole base image (most of such a build's time: push-to-serve bench).
export type BuildKind = 'kaniko' | 'layer';

const LAYER_SUFFIX = '.layer.tar.gz';

/** `layer` when the Dockerfile has no RUN and one stage; anything else is kaniko's. */
export function buildKindOfDockerfile(dockerfile: string): BuildKind {
  const stages = dockerfile.match(/^FROM\s/gim)?.length ?? 0;
  return stages === 1 && !/^RUN\s/im.test(dockerfile) ? 'layer' : 'kaniko';
}

/** The stored context's key for a build of `kind`: `contexts/<sha>.tar.gz` (kaniko) or `contexts/<sha>.layer.tar.gz`. */
export function contextKeyOfKind(key: string, kind: BuildKind): string {
  return kind === 'layer' ? key.replace(/\.tar\.gz$/, LAYER_SUFFIX) : key;
}

/**
 * What contextKeyOfKind encoded; any other key (the old system's, an upload's) is built by kaniko, and so
 * is every key when the operator turned layer builds off (`layers: false`, SLESS_LAYER_BUILDS): both
 * kinds' contexts hold the same files, so kaniko builds a layer-kind context as well.
 */
export function buildKindOfContextKey(key: string, options: { readonly layers?: boolean } = {}): BuildKind {
  if (options.layers === false) return 'kaniko';
  return key.startsWith('contexts/') && key.endsWith(LAYER_SUFFIX) ? 'layer' : 'kaniko';
}
