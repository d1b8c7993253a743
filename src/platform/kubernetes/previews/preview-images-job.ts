// What deleting a preview's images takes, when the preview goes or a push prunes functions from it (docs/previews.md "Removal"). Pure.
// A preview's builds push to the repositories of their functions in the preview namespace, as every build
// does (build-job.ts): `<registry>/<ns>-pr-<N>-<fn>` (the images), `/cache` (kaniko's layer cache) and
// `/deps` (dependencies images). The controller holds no registry credential and reads no registry, so
// the removal is a short Job in the build namespace: `sless-build-tools delete` with the registry Secret,
// as the build's tools steps have it. It runs no tenant code.
import type { V1Job } from '@kubernetes/client-node';
import type { ResolvedControllerSettings } from '../settings.ts';
import {
  BUILD_PATHS,
  buildCacheRepository,
  buildNamespaceJob,
  dependenciesRepository,
  registryConfigVolume,
  toolsSecurity,
} from '../objects/build-job.ts';
import { imageRepository } from '../objects/build-key.ts';
import { LABELS, dnsLabel, shortHash } from '../objects/meta.ts';
import { PREVIEW_LABELS, type PreviewIdentity } from './preview-objects.ts';

/** The Job's `component` label: not `build`, so nothing takes it for a function's build (no build slot, no Function woken). */
export const PREVIEW_IMAGES_COMPONENT = 'preview-images';

/** How long the Job may run: listing and deleting a few tags per repository takes seconds. */
const DEADLINE_SECONDS = 600;

export interface PreviewImageRepositories {
  /** Every repository to empty, three per function (image, layer cache, dependencies images), sorted. */
  readonly repositories: string[];
  /**
   * Functions whose repositories a Function of another namespace maps to as well (`<ns>-<name>` is the same
   * for namespace `team` and function `pr-7-api` as for `team-pr-7` and `api`): left alone, as they hold
   * that Function's images too.
   */
  readonly shared: string[];
}

/**
 * The repositories of the preview's functions `names` (the preview's status and the Functions its namespace
 * holds). `others`: every Function the controller sees outside the preview namespace.
 */
export function previewImageRepositories(
  settings: Pick<ResolvedControllerSettings, 'registry'>,
  previewNamespace: string,
  names: Iterable<string>,
  others: Iterable<{ readonly namespace: string; readonly name: string }>,
): PreviewImageRepositories {
  const elsewhere = new Set<string>();
  for (const o of others)
    if (o.namespace !== previewNamespace)
      elsewhere.add(imageRepository(settings.registry, o.namespace, o.name));
  const repositories: string[] = [];
  const shared: string[] = [];
  for (const name of [...new Set(names)].filter((n) => n !== '').sort()) {
    const input = { namespace: previewNamespace, name };
    if (elsewhere.has(imageRepository(settings.registry, previewNamespace, name))) {
      shared.push(name);
      continue;
    }
    repositories.push(
      imageRepository(settings.registry, previewNamespace, name),
      buildCacheRepository(settings, input),
      dependenciesRepository(settings, input),
    );
  }
  return { repositories: repositories.sort(), shared };
}

export interface PreviewImagesJobInput {
  readonly previewNamespace: string;
  readonly preview: PreviewIdentity;
  readonly repositories: readonly string[];
  /**
   * Tells this removal from an earlier one of the same PR (closed, reopened, closed again: the first Job
   * may still be kept for its ttl); the same value gives the same name, so a second attempt at one removal
   * finds its Job (create answers 409) rather than starting another.
   */
  readonly incarnation: string;
}

export function previewImagesJobName(previewNamespace: string, incarnation: string): string {
  return dnsLabel(['images', previewNamespace, shortHash(`${previewNamespace}/${incarnation}`, 10)], 63);
}

/** The incarnation of a preview's removal: its last head and the time of its last delivery. */
export function removalIncarnation(entry: { readonly head?: string; readonly updatedAt?: string }): string {
  return `${entry.head ?? ''}/${entry.updatedAt ?? ''}`;
}

/**
 * The incarnation of a prune: the delivery (`updatedAt`) whose build pruned the functions `names` at `head`.
 * Never a removal's (those begin with a commit or '/'); another delivery pruning the same function (added
 * again, dropped again) gets its own Job, and a retry of one delivery's build finds the Job it started.
 */
export function pruneIncarnation(head: string, updatedAt: string | undefined, names: Iterable<string>): string {
  return `prune/${updatedAt ?? ''}/${head}/${[...new Set(names)].sort().join(',')}`;
}

/**
 * The build Jobs of the preview's functions in the build namespace, running or finished: those of every
 * function (`names` left out: the preview goes), or of the functions `names` (pruned from it). A running one
 * would push after the deletion and leave its image; a finished one would give a function added again the
 * digest of an image just deleted rather than a new build (function-build.ts reads a finished Job's digest).
 */
export function previewBuildJobs(jobs: readonly V1Job[], previewNamespace: string, names?: ReadonlySet<string>): V1Job[] {
  return jobs.filter((j) => {
    const labels = j.metadata?.labels ?? {};
    return labels[LABELS.component] === 'build' && labels[LABELS.functionNamespace] === previewNamespace && (!names || names.has(labels[LABELS.function] ?? ''));
  });
}

/**
 * The Job that empties `repositories`: one step, the build tools' `delete`, with the registry Secret.
 * Collected as build Jobs are (ttlSecondsAfterFinished, SLESS_BUILD_* settings); a registry that refuses
 * deletes is logged by the step and succeeds (a retry would change nothing), any other failure is retried
 * as a build is (backoffLimit), then left failed with its log.
 */
export function previewImagesJob(settings: ResolvedControllerSettings, input: PreviewImagesJobInput): V1Job {
  const labels = {
    [LABELS.managedBy]: 'sless',
    [LABELS.component]: PREVIEW_IMAGES_COMPONENT,
    [PREVIEW_LABELS.of]: input.preview.namespace,
    [PREVIEW_LABELS.number]: String(input.preview.number),
  };
  const name = previewImagesJobName(input.previewNamespace, input.incarnation);
  return buildNamespaceJob(settings, { name, labels }, DEADLINE_SECONDS, {
    containers: [
      {
        name: 'delete',
        image: settings.buildToolsImage,
        args: ['delete', ...input.repositories.flatMap((r) => ['-repository', r])],
        env: [{ name: 'DOCKER_CONFIG', value: BUILD_PATHS.dockerConfig }],
        securityContext: toolsSecurity,
        resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '128Mi' } },
        volumeMounts: [{ name: 'registry-config', mountPath: BUILD_PATHS.dockerConfig, readOnly: true }],
      },
    ],
    volumes: [registryConfigVolume(settings)],
  });
}
