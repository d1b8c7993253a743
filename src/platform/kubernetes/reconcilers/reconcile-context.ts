// What every reconciler gets: the API client, the informer caches (reads never hit the API server), the
// settings, a logger and a way to record what happened (one log line and one Kubernetes Event with the
// same reason string).
import type { KubeQueueConsumers } from '../queue-consumers.ts';
import type { IndexName } from '../api-client/cache-index.ts';
import type { KubeCommitStatus } from '../kube-commit-status.ts';
import type { V1CronJob, V1Deployment, V1Job, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ArtifactStore } from '../../../build/artifact-store.ts';
import type { BuildLog } from '../../../store/types.ts';
import type { FunctionJobResource, FunctionResource, RepositoryResource, TriggerResource } from '../objects/resources.ts';
import type { KubeClient, EventTarget } from '../api-client/kube-client.ts';
import type { ResolvedControllerSettings } from '../settings.ts';
import type { ControllerMetrics } from '../controller-metrics.ts';
import type { StatusMemo } from './status-writer.ts';
import type { OwnedApplier } from '../objects/owned-applier.ts';
import { LABELS } from '../objects/meta.ts';
import type { TenantAccess } from '../tenant-access.ts';
import type { SlessReason } from '../../reasons.ts';
import type { ControllerLogger } from '../controller-logger.ts';

export type { ControllerLogger } from '../controller-logger.ts';

export interface Cache<T> {
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): readonly T[];
  /** Objects by an index value (api-client/cache-index.ts select() scans caches without it). */
  byIndex?(index: IndexName, value: string): readonly T[];
}

export interface Caches {
  readonly repositories: Cache<RepositoryResource>;
  readonly functions: Cache<FunctionResource>;
  readonly triggers: Cache<TriggerResource>;
  readonly functionJobs: Cache<FunctionJobResource>;
  /** Jobs labelled managed-by=sless: kaniko builds and FunctionJob runs. */
  readonly jobs: Cache<V1Job>;
  /** What Functions and Triggers own, labelled managed-by=sless: compared before applying, watched for drift. */
  readonly deployments: Cache<V1Deployment>;
  readonly services: Cache<V1Service>;
  readonly cronJobs: Cache<V1CronJob>;
  /**
   * Pods of the build Jobs in the build namespace, trimmed to their phase and terminated states
   * (api-client/slim.ts podForCache): a finished build's digest is read from here, not by a LIST per build.
   */
  readonly buildPods?: Cache<V1Pod>;
}

export interface ReconcileContext {
  readonly kube: KubeClient;
  readonly caches: Caches;
  /** Every default filled in (settings.ts resolveControllerSettings). */
  readonly settings: ResolvedControllerSettings;
  readonly logger: ControllerLogger;
  readonly store: ArtifactStore;
  readonly metrics: ControllerMetrics;
  /** Refuses platform namespaces and forbidden env_from_secrets; binds the controller's tenant role before writes. */
  readonly tenants: TenantAccess;
  /** Base image of a runtime (docs/contract.md §1: part of the build key). */
  readonly baseImageOf: (runtime: string) => string;
  readonly now: () => Date;
  /** Applies what the controller owns only where it differs from the live object (objects/owned-applier.ts). */
  readonly owned: OwnedApplier;
  /** What this controller last wrote to each status (see status-writer.ts). */
  readonly statusMemo: StatusMemo;
  /** Where build starts and outcomes are recorded (GET /v1/.../builds); none when absent. */
  readonly buildLog?: BuildLog;
  /** Commit statuses of repositories with spec.commitStatus (src/commit-status/). */
  /** The leader's queue consumers (queue-consumers.ts); absent when the controller has no function endpoints to call. */
  readonly queues?: KubeQueueConsumers;
  readonly commitStatus?: KubeCommitStatus;
}

/**
 * Routine outcomes of a repository's Functions: counted into one Event per reason on the FunctionRepository
 * (as the log line still names each), not one Event per Function: a sync of 1,000 new functions made 2,000
 * Events. Failures and everything else a user must see on the Function itself stay there.
 */
export const ROUTINE_REASONS: ReadonlySet<SlessReason> = new Set<SlessReason>(['BuildStarted', 'BuildSucceeded', 'Deployed']);

/**
 * One log line and one Event sharing the reason string: on the object, or, for a routine outcome of a
 * Function its repository manages, counted into the repository's Event for that reason (ROUTINE_REASONS).
 */
export function record(
  ctx: ReconcileContext,
  target: EventTarget & { readonly metadata?: { readonly labels?: Record<string, string> } },
  type: 'Normal' | 'Warning',
  reason: SlessReason,
  message: string,
): void {
  const ref = `${target.kind ?? '?'} ${target.metadata?.namespace ?? ''}/${target.metadata?.name ?? ''}`;
  (type === 'Warning' ? ctx.logger.warn : ctx.logger.info).call(ctx.logger, `${reason}: ${ref}: ${message}`, { reason });
  const repoName = target.kind === 'Function' ? target.metadata?.labels?.[LABELS.repository] : undefined;
  const repo = type === 'Normal' && repoName && ROUTINE_REASONS.has(reason) ? ctx.caches.repositories.get(repoName, target.metadata?.namespace) : undefined;
  if (repo) void ctx.kube.ownerEvent(repo, reason, target.metadata?.name ?? '', message);
  else void ctx.kube.event(target, type, reason, message);
}

/** `ns/name` keys used by the work queues. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The fairness group of an object's queue key: its repository (`ns/repo`), else its namespace, so that
 * the keys of one large repository take turns with everyone else's (api-client/fair-lanes.ts).
 */
export function repositoryGroup(key: string, cache: Cache<{ metadata?: { labels?: Record<string, string> } }>): string {
  const { namespace, name } = splitKey(key);
  const repo = cache.get(name, namespace)?.metadata?.labels?.[LABELS.repository];
  return repo ? `${namespace}/${repo}` : namespace;
}

export function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
