// The kubelet harness. The test cluster has no kubelet and no scheduler, so nothing ever runs a
// container (test/e2e-node has a real node). These helpers set status the way a kubelet would, so
// controllers see realistic objects:
//
//   await markPodsReady(kc, ns.name, 'app=hello', { count: 1 });       // pods Running + Ready
//   await markDeploymentAvailable(kc, ns.name, 'hello');                // its pods Ready, Deployment Available
//   await markJobSucceeded(kc, ns.name, 'hello-run-1', { terminationMessage: '{"ok":true}' });
//   await markJobFailed(kc, ns.name, 'hello-run-2', { terminationMessage: 'boom' });
//
// With kube-controller-manager running (SLESS_TEST_KUBE_CONTROLLERS=1, the default) the Job and
// Deployment controllers create the pods; the harness waits for them, sets their status and waits
// until the controllers report the Job Complete/Failed or the Deployment Available. Without it, the
// harness creates the Job's pod itself and writes the Job status (incl. the SuccessCriteriaMet /
// FailureTarget conditions the apiserver requires before Complete / Failed).
//
// A pod's output: the harness puts `terminationMessage` (or else `log`) into the container's
// state.terminated.message, as the kubelet does with terminationMessagePolicy
// FallbackToLogsOnError. Pod logs themselves cannot be served without a kubelet.
// For markJobFailed with controllers, give the Job `backoffLimit: 0` (sless runs a job once);
// otherwise every retry costs the job controller's backoff (10 s, 20 s, ...).
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node';
import { controllersRunning, eventually } from './kube.ts';

export interface PodResult {
  /** Goes to state.terminated.message of the first container (what kaniko's --digest-file or a
   * function's output would produce). */
  readonly terminationMessage?: string;
  /** Used as the termination message when terminationMessage is absent (FallbackToLogsOnError). */
  readonly log?: string;
  /** Default 0 for success, 1 for failure. */
  readonly exitCode?: number;
  /** On failure, the container that failed (init containers before it completed, later ones never ran);
   * default: the last init container when the pod has any (a build's kaniko step), else the first container. */
  readonly failedContainer?: string;
  /** On failure, the terminated reason of the failed container (default Error; e.g. OOMKilled). */
  readonly reason?: string;
}

export interface HarnessOptions {
  readonly timeoutMs?: number;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

/** Marks the pods matching `selector` Running and Ready (at least `count` of them, waiting for the
 * controllers to create them); returns their names. */
export async function markPodsReady(
  kc: KubeConfig,
  namespace: string,
  selector: string,
  options: HarnessOptions & { readonly count?: number } = {},
): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const count = options.count ?? 1;
  const pods = await eventually(
    async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: selector });
      const live = list.items.filter((p) => !p.metadata?.deletionTimestamp);
      if (live.length < count) {
        throw new Error(
          `${live.length} pod(s) match ${selector} in ${namespace}, waiting for ${count}` +
            (controllersRunning() ? '' : ' (kube-controller-manager is not running: nothing creates pods)'),
        );
      }
      return live;
    },
    { timeoutMs: options.timeoutMs },
  );
  for (const pod of pods) await setPodStatus(core, pod, runningStatus(pod));
  return pods.map((p) => p.metadata?.name ?? '');
}

/** Makes Deployment `name` Available: with controllers, by readying its pods and waiting for the
 * Deployment controller to say so; without, by writing the status a Deployment controller would. */
export async function markDeploymentAvailable(
  kc: KubeConfig,
  namespace: string,
  name: string,
  options: HarnessOptions & { readonly seen?: V1Deployment } = {},
): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  // A watcher passes the Deployment it saw (the scale benchmarks' harness): no GET per rollout.
  const deployment = options.seen ?? (await apps.readNamespacedDeployment({ name, namespace }));
  const replicas = deployment.spec?.replicas ?? 1;
  if (controllersRunning()) {
    const labels = deployment.spec?.selector.matchLabels ?? {};
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    if (replicas > 0) await markPodsReady(kc, namespace, selector, { ...options, count: replicas });
    await eventually(
      async () => {
        const d = await apps.readNamespacedDeployment({ name, namespace });
        const available = d.status?.conditions?.find((c) => c.type === 'Available');
        if ((d.status?.availableReplicas ?? 0) < replicas || available?.status !== 'True') {
          throw new Error(`Deployment ${namespace}/${name} is not Available yet: ${JSON.stringify(d.status)}`);
        }
      },
      { timeoutMs: options.timeoutMs },
    );
    return;
  }
  const now = new Date().toISOString();
  await apps.patchNamespacedDeploymentStatus(
    {
      name,
      namespace,
      body: {
        status: {
          observedGeneration: deployment.metadata?.generation,
          replicas,
          updatedReplicas: replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          conditions: [
            { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.', lastUpdateTime: now, lastTransitionTime: now },
            { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'ReplicaSet has successfully progressed.', lastUpdateTime: now, lastTransitionTime: now },
          ],
        },
      },
    },
    mergePatch,
  );
}

export async function markJobSucceeded(
  kc: KubeConfig,
  namespace: string,
  jobName: string,
  result: PodResult & HarnessOptions & { readonly seen?: V1Job } = {},
): Promise<V1Job> {
  return finishJob(kc, namespace, jobName, true, result);
}

export async function markJobFailed(
  kc: KubeConfig,
  namespace: string,
  jobName: string,
  result: PodResult & HarnessOptions = {},
): Promise<V1Job> {
  return finishJob(kc, namespace, jobName, false, result);
}

async function finishJob(
  kc: KubeConfig,
  namespace: string,
  jobName: string,
  succeeded: boolean,
  result: PodResult & HarnessOptions & { readonly seen?: V1Job },
): Promise<V1Job> {
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const want = succeeded ? 'Complete' : 'Failed';
  const finished = (job: V1Job): boolean =>
    (job.status?.conditions ?? []).some((c) => c.type === want && c.status === 'True');

  if (!controllersRunning()) {
    // A watcher passes the Job it saw (the scale benchmarks' harness): no GET per build.
    const job = result.seen ?? (await batch.readNamespacedJob({ name: jobName, namespace }));
    const pod = await createJobPod(core, job);
    await setPodStatus(core, pod, terminatedStatus(pod, succeeded, result));
    return writeJobStatus(batch, job, succeeded);
  }

  // The job controller creates a pod; finish it, and any retry it makes, until the Job is done.
  return eventually(
    async () => {
      const job = await batch.readNamespacedJob({ name: jobName, namespace });
      if (finished(job)) return job;
      const pods = await core.listNamespacedPod({ namespace, labelSelector: `${JOB_NAME_LABEL}=${jobName}` });
      for (const pod of pods.items) {
        const phase = pod.status?.phase;
        if (phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp) {
          await setPodStatus(core, pod, terminatedStatus(pod, succeeded, result));
        }
      }
      throw new Error(`Job ${namespace}/${jobName} is not ${want} yet: ${JSON.stringify(job.status)}`);
    },
    { timeoutMs: result.timeoutMs ?? 30_000, intervalMs: 200 },
  );
}

/** Status bodies are written as JSON (timestamps as RFC 3339 strings), not as client model objects. */
type Json = Record<string, unknown>;

async function setPodStatus(core: CoreV1Api, pod: V1Pod, status: Json): Promise<void> {
  await core.patchNamespacedPodStatus(
    { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', body: { status } },
    mergePatch,
  );
}

/** Without a job controller: the pod it would have made, labelled and owned like the real one. */
async function createJobPod(core: CoreV1Api, job: V1Job): Promise<V1Pod> {
  const name = job.metadata?.name ?? '';
  const namespace = job.metadata?.namespace ?? '';
  const uid = job.metadata?.uid ?? '';
  const template = job.spec?.template;
  return core.createNamespacedPod({
    namespace,
    body: {
      metadata: {
        generateName: `${name}-`,
        labels: {
          ...template?.metadata?.labels,
          [JOB_NAME_LABEL]: name,
          'batch.kubernetes.io/controller-uid': uid,
          'job-name': name,
          'controller-uid': uid,
        },
        annotations: template?.metadata?.annotations,
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: { ...(template?.spec ?? { containers: [] }) },
    },
  });
}

async function writeJobStatus(batch: BatchV1Api, job: V1Job, succeeded: boolean): Promise<V1Job> {
  const now = new Date().toISOString();
  const startTime = job.status?.startTime ? new Date(job.status.startTime).toISOString() : now;
  const condition = (type: string, reason: string, message: string): Json => ({
    type,
    status: 'True',
    reason,
    message,
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  const status: Json = succeeded
    ? {
        completionTime: now,
        succeeded: job.spec?.completions ?? 1,
        conditions: [
          condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'),
          condition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods'),
        ],
      }
    : {
        failed: 1,
        conditions: [
          condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
          condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
        ],
      };
  return batch.patchNamespacedJobStatus(
    {
      name: job.metadata?.name ?? '',
      namespace: job.metadata?.namespace ?? '',
      body: { status: { startTime, active: 0, ready: 0, terminating: 0, ...status } },
    },
    mergePatch,
  );
}

let nextIp = 1;
function podIp(): string {
  const n = (process.pid * 256 + nextIp++) % 65_024;
  return `10.244.${Math.floor(n / 254)}.${(n % 254) + 1}`;
}

function podConditions(now: string, ready: boolean): Json[] {
  const reason = ready ? {} : { reason: 'PodCompleted' };
  return [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
    { type: 'Initialized', status: 'True', lastTransitionTime: now },
    { type: 'PodReadyToStartContainers', status: ready ? 'True' : 'False', lastTransitionTime: now },
    { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: now, ...reason },
    { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now, ...reason },
  ];
}

function runningStatus(pod: V1Pod): Json {
  const now = new Date().toISOString();
  const ip = podIp();
  return {
    phase: 'Running',
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: now,
    conditions: podConditions(now, true),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
}

function terminatedStatus(pod: V1Pod, succeeded: boolean, result: PodResult): Json {
  const now = new Date().toISOString();
  const startedAt = pod.status?.startTime ? new Date(pod.status.startTime).toISOString() : now;
  const message = result.terminationMessage ?? result.log;
  const inits = pod.spec?.initContainers ?? [];
  if (!succeeded && inits.length > 0) return failedWithSteps(pod, result, now, startedAt, message);
  return {
    phase: succeeded ? 'Succeeded' : 'Failed',
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    startTime: startedAt,
    conditions: podConditions(now, false),
    containerStatuses: (pod.spec?.containers ?? []).map((c, i) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: {
        terminated: {
          exitCode: result.exitCode ?? (succeeded ? 0 : 1),
          reason: succeeded ? 'Completed' : 'Error',
          ...(i === 0 && message !== undefined ? { message } : {}),
          startedAt,
          finishedAt: now,
        },
      },
    })),
  };
}

/** A failed pod with init containers, the way the kubelet leaves it: steps before the failed one
 * completed, the failed one exited non-zero (with the message), the ones after it never started. */
function failedWithSteps(pod: V1Pod, result: PodResult, now: string, startedAt: string, message: string | undefined): Json {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const failing = result.failedContainer ?? inits[inits.length - 1]?.name ?? containers[0]?.name;
  let reached = false;
  const statusOf = (c: { name: string; image?: string }): Json => {
    const base = { name: c.name, image: c.image ?? '', imageID: '', ready: false, started: false, restartCount: 0 };
    if (reached) return { ...base, state: { waiting: { reason: 'PodInitializing' } } };
    if (c.name !== failing) return { ...base, state: { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: now } } };
    reached = true;
    return {
      ...base,
      state: { terminated: { exitCode: result.exitCode ?? 1, reason: result.reason ?? 'Error', ...(message !== undefined ? { message } : {}), startedAt, finishedAt: now } },
    };
  };
  return {
    phase: 'Failed',
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    startTime: startedAt,
    conditions: podConditions(now, false),
    initContainerStatuses: inits.map(statusOf),
    containerStatuses: containers.map(statusOf),
  };
}
