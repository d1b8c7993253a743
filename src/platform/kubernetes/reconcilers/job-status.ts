// Reading a finished Job the way kubectl would: its conditions, and what its pod said (the termination
// message, where kaniko writes the digest; the log, where a function prints its result).
import { JOB_NAME_LABEL } from '../objects/meta.ts';
import { select } from '../api-client/cache-index.ts';
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../api-client/kube-client.ts';
import type { Cache } from './reconcile-context.ts';

export function jobFailureReason(job: V1Job): string {
  const failed = (job.status?.conditions ?? []).find((c) => c.type === 'Failed' && c.status === 'True');
  return failed ? `${failed.reason ?? 'Failed'}${failed.message ? `: ${failed.message}` : ''}` : 'failed';
}

/**
 * The Job's most recent pod, if any: from `cache` (the build pods' watch) when it shows every pod the
 * finished Job counted, each finished; else one LIST (the cache lags, or has no such pods).
 */
export async function latestJobPod(kube: KubeClient, job: V1Job, cache?: Cache<V1Pod>): Promise<V1Pod | undefined> {
  const namespace = job.metadata?.namespace ?? '';
  const cached = cache ? settledJobPod(job, select(cache, namespace, 'job', `${namespace}/${job.metadata?.name ?? ''}`)) : undefined;
  if (cached) return cached;
  return newest(await kube.listPods(namespace, `${JOB_NAME_LABEL}=${job.metadata?.name ?? ''}`));
}

/**
 * The newest of a finished Job's pods among `pods`, when they can stand in for a LIST: at least as many
 * of its pods as the Job counted (succeeded + failed), and each in a final phase (the kubelet writes the
 * containers' terminated states with it). Undefined otherwise.
 */
export function settledJobPod(job: V1Job, pods: readonly V1Pod[]): V1Pod | undefined {
  const name = job.metadata?.name;
  const mine = pods.filter((p) => p.metadata?.labels?.[JOB_NAME_LABEL] === name);
  const counted = (job.status?.succeeded ?? 0) + (job.status?.failed ?? 0);
  if (mine.length === 0 || mine.length < counted) return undefined;
  if (!mine.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')) return undefined;
  return newest(mine);
}

/**
 * The termination message of `container` in a still-running build Job's pod that has Succeeded (every
 * step exited 0): the image is pushed by then, and the Job's Complete condition follows a second or more
 * later (the Job controller tracks its pods in batches). From the build pods' cache only; undefined when
 * it shows no such pod.
 */
export function succeededPodMessage(job: V1Job, cache: Cache<V1Pod> | undefined, container: string): string | undefined {
  if (!cache) return undefined;
  const namespace = job.metadata?.namespace ?? '';
  const pods = select(cache, namespace, 'job', `${namespace}/${job.metadata?.name ?? ''}`).filter((p) => p.metadata?.labels?.[JOB_NAME_LABEL] === job.metadata?.name);
  const pod = newest(pods);
  return pod?.status?.phase === 'Succeeded' ? terminationMessage(pod, container) : undefined;
}

function newest(pods: readonly V1Pod[]): V1Pod | undefined {
  const time = (p: V1Pod) => new Date(p.metadata?.creationTimestamp ?? 0).getTime();
  return [...pods].sort((a, b) => time(b) - time(a))[0];
}

function allStatuses(pod: V1Pod | undefined): V1ContainerStatus[] {
  return [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
}

/** The container's (init containers included) termination message; else the first container's. */
export function terminationMessage(pod: V1Pod | undefined, container: string): string | undefined {
  const status = allStatuses(pod).find((c) => c.name === container) ?? pod?.status?.containerStatuses?.[0];
  return status?.state?.terminated?.message ?? status?.lastState?.terminated?.message ?? undefined;
}

/** The first container (init containers first, in order) that exited non-zero: whose output says why a pod failed. */
export function failedContainer(pod: V1Pod | undefined): string | undefined {
  return allStatuses(pod).find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0)?.name;
}

/** What the pod printed: the log tail when the kubelet serves it, else the termination message. */
export async function podOutput(kube: KubeClient, pod: V1Pod | undefined, container: string, maxBytes: number): Promise<string> {
  if (!pod?.metadata?.name) return '';
  const log = await kube.podLogTail(pod.metadata.namespace ?? '', pod.metadata.name, container, maxBytes);
  // Trimmed as sless dev trims a job's stdout: the message is the output, not its final newline.
  const text = log.trim() !== '' ? log : (terminationMessage(pod, container) ?? '');
  return capBytes(text.trim(), maxBytes);
}

/** Keeps the end of text within maxBytes (the end of a log says why it failed). */
export function capBytes(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  return `…${buf.subarray(buf.length - maxBytes).toString('utf8').replace(/^\uFFFD+/, '')}`;
}
