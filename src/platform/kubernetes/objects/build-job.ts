// The build Job: one pod in the build namespace, three steps, and only the step that runs no tenant code
// holds a credential (see docs/security.md, Builds):
//   1. init `fetch` (sless-build-tools): downloads the build context through a presigned GET into an
//      emptyDir and copies the function's layer cache repository into another, as kaniko's OCI cache.
//   2. init `kaniko`: builds from the local context with the local cache, `--no-push`, the image as a
//      tarball into a third emptyDir. Tenant code runs here (the install step, as user 10001): it gets no
//      S3 key, no registry credential (only an optional pull-only one), no service account token.
//   3. `push` (sless-build-tools): pushes the tarball and the new cache entries with the registry
//      Secret, and writes the digest to its termination message, where the reconciler reads it.
// A context whose Dockerfile runs nothing (build-kind.ts: `layer`) is built without kaniko: one `push`
// step (sless-build-tools append) fetches it, adds the code as one layer to the base image, pushes and
// writes the digest. No tenant code runs in such a build; kaniko's unpacking of the base image was most
// of its time.
// A context that installs dependencies (`dependencies`) keeps the three steps, but kaniko builds only the
// dependencies image (`Dockerfile.dependencies`), and only when `fetch` finds the registry without it
// (its tag hashes that Dockerfile and the dependency files: sless-build-tools deps.go); otherwise fetch
// hands kaniko a context with nothing to build. `push` (sless-build-tools append -dependencies) pushes
// the dependencies image kaniko built, if any, then appends the code onto it as a layer build does.
import type { V1Container, V1Job, V1PodSpec, V1SecurityContext, V1Volume } from '@kubernetes/client-node';
import { DEPENDENCY_DOCKERFILES, type BuildKind } from '../../../build/build-kind.ts';
import type { ControllerSettings, ResolvedControllerSettings } from '../settings.ts';
import { imageRepository, imageTag } from './build-key.ts';
import { ANNOTATIONS, LABELS, dnsLabel, functionLabels, shortHash } from './meta.ts';

export interface BuildJobInput {
  readonly namespace: string;
  readonly name: string;
  readonly buildKey: string;
  /**
   * A URL that reads this build's context and nothing else (ArtifactStore.readUrl, S3: a presigned GET),
   * valid at least for buildContextUrlTtlSec(settings).
   */
  readonly contextUrl: string;
  /** What the context's Dockerfile needs (buildKindOfContextKey of its key); default kaniko. */
  readonly kind?: BuildKind;
}

/** The pod's containers, by role: the reconciler reads the digest from `push`. */
export const BUILD_CONTAINERS = { fetch: 'fetch', kaniko: 'kaniko', push: 'push' } as const;

/** Where the steps meet (emptyDirs) and where the registry Secret is mounted for the tools steps. */
export const BUILD_PATHS = {
  workspace: '/workspace',
  context: '/workspace/context.tar.gz',
  /** A `dependencies` build: what kaniko builds (the context, or nothing when the dependencies image exists). */
  kanikoContext: '/workspace/kaniko-context.tar.gz',
  /** A `dependencies` build: fetch's finding, the dependencies image's reference and whether kaniko builds it. */
  dependencies: '/workspace/dependencies',
  /** kaniko's OCI-layout cache: one layout per key at `<layers>:<key>`, in /cache/kaniko, which fetch creates 0755 (uid 65532): kaniko (root) writes there, its install steps (uid 10001) cannot. */
  cacheDir: '/cache/kaniko/layers',
  out: '/out',
  image: '/out/image.tar',
  dockerConfig: '/docker',
  kanikoDockerConfig: '/kaniko/.docker',
} as const;

/** The uid of the tools steps (no tenant code there; nothing they need is root's). */
export const BUILD_TOOLS_UID = 65532;

/**
 * Deterministic from the function and its build key: a controller that restarts mid-build finds the Job it
 * already started (create answers 409) instead of starting a second one.
 */
export function buildJobName(namespace: string, name: string, key: string): string {
  return dnsLabel(['build', name, shortHash(`${namespace}/${name}/${key}`, 12)], 63);
}

export function buildJobLabels(namespace: string, name: string, key: string): Record<string, string> {
  return { ...functionLabels(namespace, name), [LABELS.component]: 'build', [LABELS.buildKey]: key.slice(0, 40) };
}

export function buildDestination(settings: Pick<ControllerSettings, 'registry'>, input: Pick<BuildJobInput, 'namespace' | 'name' | 'buildKey'>): string {
  return `${imageRepository(settings.registry, input.namespace, input.name)}:${imageTag(input.buildKey)}`;
}

/**
 * The function's own layer cache: `<its image repository>/cache`. One per function, written only by the
 * push step: a tenant can spoil only its own function's cache, never another's (docs/security.md, Builds).
 */
export function buildCacheRepository(settings: Pick<ControllerSettings, 'registry'>, input: Pick<BuildJobInput, 'namespace' | 'name'>): string {
  return `${imageRepository(settings.registry, input.namespace, input.name)}/cache`;
}

/**
 * Where a function's dependencies images go: `<its image repository>/deps`, one per function like its
 * layer cache (the installs are tenant code: an image one tenant built is never another's base).
 */
export function dependenciesRepository(settings: Pick<ControllerSettings, 'registry'>, input: Pick<BuildJobInput, 'namespace' | 'name'>): string {
  return `${imageRepository(settings.registry, input.namespace, input.name)}/deps`;
}

/** How long the context URL must stay valid: the Job's whole deadline (a pod may start late), plus a margin. */
export function buildContextUrlTtlSec(settings: Pick<ResolvedControllerSettings, 'build'>): number {
  return settings.build.activeDeadlineSeconds + 600;
}

/** The tools steps' security context (no tenant code runs there); the preview images' Job uses it too. */
export const toolsSecurity: V1SecurityContext = {
  runAsUser: BUILD_TOOLS_UID,
  runAsGroup: BUILD_TOOLS_UID,
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/**
 * The push step reads what kaniko (root) wrote: its OCI cache blobs are root's, mode 0600 (written
 * through temp files), so the tools user could not push a single cache entry (permission denied) and
 * no build ever took a layer from the cache. Root as their owner, with no capability at all: it reads
 * its own files and nothing else a capability would open. It runs no tenant code.
 */
const pushSecurity: V1SecurityContext = { ...toolsSecurity, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false };

export function buildJob(settings: ResolvedControllerSettings, input: BuildJobInput): V1Job {
  const labels = buildJobLabels(input.namespace, input.name, input.buildKey);
  const build = settings.build;
  const cache = build.cache;
  const toolsImage = settings.buildToolsImage;
  const destination = buildDestination(settings, input);
  const cacheArgs = cache ? ['-cache-repo', buildCacheRepository(settings, input), '-cache-dir', BUILD_PATHS.cacheDir] : [];
  const mount = (name: string, mountPath: string, readOnly = false) => ({ name, mountPath, ...(readOnly ? { readOnly } : {}) });
  const registryConfig = mount('registry-config', BUILD_PATHS.dockerConfig, true);
  const toolsEnv = [{ name: 'DOCKER_CONFIG', value: BUILD_PATHS.dockerConfig }];

  const dependencies = input.kind === 'dependencies';
  const depsRepo = dependenciesRepository(settings, input);
  const fetch: V1Container = {
    name: BUILD_CONTAINERS.fetch,
    image: toolsImage,
    args: [
      'fetch',
      '-url',
      input.contextUrl,
      '-out',
      BUILD_PATHS.context,
      ...cacheArgs,
      ...(dependencies ? ['-deps-repo', depsRepo, '-deps-dockerfile', DEPENDENCY_DOCKERFILES.dependencies, '-kaniko-context', BUILD_PATHS.kanikoContext, '-deps-out', BUILD_PATHS.dependencies] : []),
    ],
    env: toolsEnv,
    securityContext: toolsSecurity,
    volumeMounts: [mount('workspace', BUILD_PATHS.workspace), mount('cache', '/cache'), registryConfig],
  };
  const kaniko: V1Container = {
    name: BUILD_CONTAINERS.kaniko,
    image: settings.kanikoImage,
    args: [
      ...(dependencies
        ? [`--context=tar://${BUILD_PATHS.kanikoContext}`, `--dockerfile=${DEPENDENCY_DOCKERFILES.dependencies}`, `--destination=${depsRepo}:build`]
        : [`--context=tar://${BUILD_PATHS.context}`, `--destination=${destination}`]),
      '--no-push',
      `--tar-path=${BUILD_PATHS.image}`,
      '--snapshot-mode=redo',
      '--use-new-run',
      ...(cache ? ['--cache=true', `--cache-repo=oci:${BUILD_PATHS.cacheDir}`] : ['--cache=false']),
    ],
    // kaniko itself must be root (it unpacks the base image over its own root); the install steps it runs
    // are user 10001 (the generated Dockerfile). No setuid gains for anything it runs.
    securityContext: { allowPrivilegeEscalation: false },
    resources: {
      requests: { cpu: build.cpu, memory: build.memory },
      limits: { memory: build.memory },
    },
    volumeMounts: [
      mount('workspace', BUILD_PATHS.workspace, true),
      mount('cache', '/cache'),
      mount('out', BUILD_PATHS.out),
      ...(build.pullSecretName ? [mount('kaniko-pull-config', BUILD_PATHS.kanikoDockerConfig, true)] : []),
    ],
  };
  const push: V1Container = {
    name: BUILD_CONTAINERS.push,
    image: toolsImage,
    args: dependencies
      ? [
          'append',
          '-context',
          BUILD_PATHS.context,
          '-workdir',
          BUILD_PATHS.workspace,
          '-dockerfile',
          DEPENDENCY_DOCKERFILES.code,
          '-dependencies',
          BUILD_PATHS.dependencies,
          '-tarball',
          BUILD_PATHS.image,
          '-destination',
          destination,
          '-digest-file',
          '/dev/termination-log',
          ...cacheArgs,
        ]
      : ['push', '-tarball', BUILD_PATHS.image, '-destination', destination, '-digest-file', '/dev/termination-log', ...cacheArgs],
    env: toolsEnv,
    securityContext: pushSecurity,
    terminationMessagePolicy: 'File',
    volumeMounts: [
      mount('out', BUILD_PATHS.out, true),
      mount('cache', '/cache', true),
      registryConfig,
      // The code layer is written beside the context (an emptyDir, 0777: root without capabilities may add files).
      ...(dependencies ? [mount('workspace', BUILD_PATHS.workspace)] : []),
    ],
  };
  const registryVolume = registryConfigVolume(settings);

  // The layer build reads the base image with the registry Secret only: with a pull-only Secret for
  // private base images (SLESS_BUILD_PULL_SECRET), kaniko builds, as it holds that Secret.
  if (input.kind === 'layer' && !build.pullSecretName) {
    const layer: V1Container = {
      name: BUILD_CONTAINERS.push,
      image: toolsImage,
      args: ['append', '-url', input.contextUrl, '-workdir', BUILD_PATHS.workspace, '-destination', destination, '-digest-file', '/dev/termination-log'],
      env: toolsEnv,
      securityContext: toolsSecurity,
      terminationMessagePolicy: 'File',
      // The build's CPU share (SLESS_BUILD_CPU), as kaniko's; memory for streaming layers, not for installs.
      resources: { requests: { cpu: build.cpu, memory: '128Mi' }, limits: { memory: '512Mi' } },
      volumeMounts: [mount('workspace', BUILD_PATHS.workspace), registryConfig],
    };
    return jobOf(settings, input, labels, { containers: [layer], volumes: [{ name: 'workspace', emptyDir: {} }, registryVolume] });
  }
  return jobOf(settings, input, labels, {
    initContainers: [fetch, kaniko],
    containers: [push],
    volumes: [
      { name: 'workspace', emptyDir: {} },
      { name: 'cache', emptyDir: {} },
      { name: 'out', emptyDir: {} },
      registryVolume,
      ...(build.pullSecretName ? [dockerConfigVolume('kaniko-pull-config', build.pullSecretName, 0o400)] : []),
    ],
  });
}

/** A docker config.json Secret as a volume (`config.json`). */
function dockerConfigVolume(name: string, secretName: string, mode: number): V1Volume {
  return { name, secret: { secretName, optional: true, defaultMode: mode, items: [{ key: '.dockerconfigjson', path: 'config.json' }] } };
}

/**
 * The registry Secret (SLESS_REGISTRY_SECRET) as the volume `registry-config`, for the tools steps, which
 * mount it at BUILD_PATHS.dockerConfig. The tools user reads it; kaniko's pull Secret is root's only
 * (kaniko's install steps run as 10001).
 */
export function registryConfigVolume(settings: Pick<ResolvedControllerSettings, 'registrySecretName'>): V1Volume {
  return dockerConfigVolume('registry-config', settings.registrySecretName, 0o444);
}

function jobOf(
  settings: ResolvedControllerSettings,
  input: BuildJobInput,
  labels: Record<string, string>,
  pod: Pick<V1PodSpec, 'initContainers' | 'containers' | 'volumes'>,
): V1Job {
  const meta = { name: buildJobName(input.namespace, input.name, input.buildKey), labels, annotations: { [ANNOTATIONS.buildKey]: input.buildKey } };
  return buildNamespaceJob(settings, meta, settings.build.activeDeadlineSeconds, pod);
}

/**
 * A Job of the build namespace: run once (no restarts, the build's backoffLimit), no service account token,
 * collected ttlSecondsAfterFinished after it finished (SLESS_BUILD_* settings). Builds and the deletion of
 * a preview's images (previews/preview-images-job.ts).
 */
export function buildNamespaceJob(
  settings: Pick<ResolvedControllerSettings, 'build' | 'buildNamespace'>,
  meta: { readonly name: string; readonly labels: Record<string, string>; readonly annotations?: Record<string, string> },
  activeDeadlineSeconds: number,
  pod: Pick<V1PodSpec, 'initContainers' | 'containers' | 'volumes'>,
): V1Job {
  const build = settings.build;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: meta.name, namespace: settings.buildNamespace, labels: meta.labels, ...(meta.annotations ? { annotations: meta.annotations } : {}) },
    spec: {
      backoffLimit: build.backoffLimit,
      ttlSecondsAfterFinished: build.ttlSecondsAfterFinished,
      activeDeadlineSeconds,
      template: {
        metadata: { labels: meta.labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...pod,
        },
      },
    },
  };
}
