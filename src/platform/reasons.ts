// Every reason sless writes into a condition or an Event, one const list per kind (Function,
// FunctionRepository, Trigger, FunctionJob): a reconciler's outcome, a StalledError and record() take only
// these, so a mistyped reason fails typecheck instead of reaching users (kubectl, /v1, Flux and Argo CD
// health checks match on them). `sless dev` shares the repository's. Adding a reason = adding it here.
import type { GitSourceErrorReason } from '../source/git-source-error.ts';
import { TREE_LIMIT_REASONS } from '../source/tree-limits.ts';

/** Why the platform refuses a namespace or Secret (kubernetes/tenant-access.ts; /v1 answers it with 400). */
export const TENANT_REFUSAL_REASONS = ['ReservedNamespace', 'SecretNotAllowed', 'SecretNotFound'] as const;
export type TenantRefusalReason = (typeof TENANT_REFUSAL_REASONS)[number];

/**
 * Every kind's: spec.suspend (the reconciler skeleton's outcome; a disabled cron Trigger says it too) and
 * a refused namespace or Secret.
 */
const EVERY_KIND = ['Suspended', ...TENANT_REFUSAL_REASONS] as const;

/** A Trigger's or FunctionJob's Function is missing or has no image yet. */
const FUNCTION_REF = ['FunctionNotFound', 'WaitingForImage'] as const;

/** A git error (source/git-source-error.ts) as a condition reason: CamelCase, prefixed Git. */
export const GIT_REASONS = ['GitAuthFailed', 'GitNotFound', 'GitNotGit', 'GitBranchNotFound', 'GitRefused', 'GitTooLarge', 'GitUnreachable', 'GitFetchFailed'] as const;
export type GitReason = (typeof GIT_REASONS)[number];
export const GIT_REASON_OF: Readonly<Record<GitSourceErrorReason, GitReason>> = {
  auth: 'GitAuthFailed',
  'not-found': 'GitNotFound',
  'not-git': 'GitNotGit',
  'branch-not-found': 'GitBranchNotFound',
  refused: 'GitRefused',
  'too-large': 'GitTooLarge',
  unreachable: 'GitUnreachable',
  'fetch-failed': 'GitFetchFailed',
};

/** Waiting reasons of a container that will not become ready by waiting alone: a Function's condition repeats the kubelet's. */
export const BROKEN_CONTAINER_REASONS = [
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
] as const;
export type BrokenContainerReason = (typeof BROKEN_CONTAINER_REASONS)[number];

export function isBrokenContainerReason(reason: string): reason is BrokenContainerReason {
  return (BROKEN_CONTAINER_REASONS as readonly string[]).includes(reason);
}

/** Where a Deployment's rollout stands (kubernetes/reconcilers/rollout.ts). */
export const ROLLOUT_REASONS = ['RollingOut', 'ScalingDown', 'ProgressDeadlineExceeded', ...BROKEN_CONTAINER_REASONS] as const;
export type RolloutReason = (typeof ROLLOUT_REASONS)[number];

export const FUNCTION_REASONS = [
  ...EVERY_KIND,
  ...ROLLOUT_REASONS,
  'NoCode', 'ForeignBucket', 'InvalidEnv', 'BuildQueued', 'Building', 'ContextMissing', 'BuildRetrying', 'BuildFailed', 'Deployed',
  // A rollback (revisions.ts): the Pinned condition, a pin that names no kept revision, a pin annotation that does not parse.
  'Pinned', 'RevisionMissing', 'InvalidPin',
  // A thrown error, retried with backoff.
  'ReconcileError',
  // Events and log lines only.
  'BuildStarted', 'BuildSucceeded', 'DriftRepaired', 'Finalized',
] as const;
export type FunctionReason = (typeof FUNCTION_REASONS)[number];

export const REPOSITORY_REASONS = [
  ...EVERY_KIND,
  ...GIT_REASONS,
  ...TREE_LIMIT_REASONS,
  'SecretNotMarked', 'TooManyFunctions', 'NamespaceQuotaExceeded', 'EmptySource', 'ArtifactFailed', 'FunctionErrors', 'Synced',
  // A thrown error, retried with backoff; also `sless dev`'s failed sync.
  'SyncFailed',
  // `sless dev` before its first sync.
  'Progressing',
  // Events only.
  'Orphaned',
] as const;
export type RepositoryReason = (typeof REPOSITORY_REASONS)[number];

export const TRIGGER_REASONS = [
  ...EVERY_KIND,
  ...FUNCTION_REF,
  'WaitingForFunction', 'Enabled', 'Disabled', 'Scheduled',
  // A queue Trigger's consumer (kubernetes/reconcilers/queue-trigger-step.ts).
  'Connecting', 'Consuming', 'QueueNotFound', 'LoginRefused', 'InvalidSpec', 'QueuesUnavailable', 'QueueConsumerLimit',
  // A thrown error, retried with backoff.
  'ApplyFailed',
] as const;
export type TriggerReason = (typeof TRIGGER_REASONS)[number];

export const FUNCTION_JOB_REASONS = [
  ...EVERY_KIND,
  ...FUNCTION_REF,
  'Skipped', 'Running', 'Succeeded', 'RunFailed',
  // A finished run whose Job expired: the reason is the phase it ended in.
  'Failed',
  // A thrown error, retried with backoff.
  'RunError',
  // Events only.
  'RunStarted', 'RunSucceeded',
] as const;
export type FunctionJobReason = (typeof FUNCTION_JOB_REASONS)[number];

/** A reason of any kind: what a StalledError, the status writer and record() accept. */
export type SlessReason = FunctionReason | RepositoryReason | TriggerReason | FunctionJobReason;
