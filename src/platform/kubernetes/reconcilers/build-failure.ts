// What a failed build Job means for the next step (issue 11 item 9), decided from the Job and its pod
// alone (pure). A build whose user-facing step (kaniko running the Dockerfile: dependency installs, the
// compile) exited non-zero fails the same way every time: it is deterministic, and is built again only
// for a new build key or an explicit request (the sless.kube5s.ru/requestedAt annotation). Anything else
// (the context fetch or the push failed, the pod was evicted or never started, the deadline passed) is
// the infrastructure's: retried with a capped exponential backoff.
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import { BUILD_CONTAINERS } from '../objects/build-job.ts';

export type BuildFailure = { readonly kind: 'deterministic' | 'infrastructure'; readonly why: string };

const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 30 * 60_000;

function statuses(pod: V1Pod | undefined): V1ContainerStatus[] {
  return [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
}

export function classifyBuildFailure(job: V1Job, pod: V1Pod | undefined): BuildFailure {
  const failed = (job.status?.conditions ?? []).find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed?.reason === 'DeadlineExceeded') return { kind: 'infrastructure', why: 'the build ran past its deadline (SLESS_BUILD_TIMEOUT)' };
  if (!pod) return { kind: 'infrastructure', why: 'the build pod is gone' };
  if (pod.status?.reason === 'Evicted') return { kind: 'infrastructure', why: 'the build pod was evicted' };
  const broken = statuses(pod).find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0);
  if (!broken) return { kind: 'infrastructure', why: 'the build pod did not run to an exit code' };
  const terminated = broken.state?.terminated;
  if (broken.name !== BUILD_CONTAINERS.kaniko) return { kind: 'infrastructure', why: `the ${broken.name} step failed (exit code ${terminated?.exitCode})` };
  if (terminated?.reason === 'OOMKilled') return { kind: 'deterministic', why: 'the build ran out of memory (SLESS_BUILD_MEMORY)' };
  return { kind: 'deterministic', why: `the image build exited with code ${terminated?.exitCode}` };
}

/** How long to wait before the n-th retry (1-based) of an infrastructure failure: 30 s doubling, at most 30 min. */
export function buildRetryDelayMs(retry: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, retry - 1));
}

/** When the Job finished, as the Job says (its Failed condition), else its creation. */
export function jobFinishedAt(job: V1Job): number {
  const failed = (job.status?.conditions ?? []).find((c) => c.type === 'Failed' && c.status === 'True');
  const at = failed?.lastTransitionTime ?? job.status?.completionTime ?? job.metadata?.creationTimestamp;
  return at ? new Date(at).getTime() : 0;
}
