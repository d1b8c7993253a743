// The Deployment and Service that serve one built Function, and the pod template its CronJobs and Jobs
// reuse (same image, same env; job mode adds SLESS_MODE=job and SLESS_EVENT).
import type { V1Deployment, V1EnvVar, V1PodSpec, V1Service } from '@kubernetes/client-node';
import type { ResolvedControllerSettings } from '../settings.ts';
import { functionSpecDefaults } from './crd-defaults.ts';
import { envOf } from './stored-env.ts';
import { ANNOTATIONS, controllerRef, functionLabels, LABELS } from './meta.ts';
import type { FunctionResource } from './resources.ts';

export const FUNCTION_PORT = 8080;
export const SERVICE_PORT = 80;
/** What every runtime answers 200 on once it serves (runtimes/*): the kubelet's probes and /fn's (pod-routing/). */
export const HEALTH_PATH = '/health';
/** How long a terminating function pod keeps serving before SIGTERM (see functionDeployment). */
const PRE_STOP_SLEEP_SECONDS = 5;
/** A function process has 60 s to answer /health once (then the kubelet restarts it), probed every second. */
export const STARTUP_PROBE = { periodSeconds: 1, timeoutSeconds: 2, failureThreshold: 60 } as const;

export interface WorkloadOptions {
  readonly imageRef: string;
  /** false marks the Deployment http-disabled (docs/contract.md §1 http.enabled): /fn answers 503, never wakes it. */
  readonly httpEnabled: boolean;
  /** From scaling/workload-replicas.ts: the autoscaler's live count unless the bounds, disabling or queues force another. */
  readonly replicas: number;
}

function nameAndNamespace(fn: FunctionResource): { name: string; namespace: string } {
  const name = fn.metadata?.name;
  const namespace = fn.metadata?.namespace;
  if (!name || !namespace) throw new Error('a Function object without name or namespace cannot be deployed');
  return { name, namespace };
}

export function workloadLabels(fn: FunctionResource, component: string): Record<string, string> {
  const { name, namespace } = nameAndNamespace(fn);
  return { ...functionLabels(namespace, name), [LABELS.component]: component };
}

/** The in-cluster base URL the /fn proxy sends calls to. */
export function serviceBaseUrl(namespace: string, name: string, clusterDomain: string): string {
  return `http://${name}.${namespace}.svc.${clusterDomain}:${SERVICE_PORT}`;
}

/** The pod spec shared by the Deployment, CronJobs and Jobs of one function. */
export function functionPodSpec(
  settings: Pick<ResolvedControllerSettings, 'imagePullSecrets'>,
  fn: FunctionResource,
  imageRef: string,
  extraEnv: readonly V1EnvVar[] = [],
): V1PodSpec {
  const { name, namespace } = nameAndNamespace(fn);
  const spec = fn.spec;
  if (!spec) throw new Error(`Function ${namespace}/${name} has no spec`);
  const filled = functionSpecDefaults(spec);
  const memory = `${filled.memoryMB}Mi`;
  const userEnv = Object.entries(envOf(spec.env))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ({ name: k, value: v }));
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    imagePullSecrets: settings.imagePullSecrets.map((s) => ({ name: s })),
    securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'function',
        image: imageRef,
        ports: [{ name: 'http', containerPort: FUNCTION_PORT, protocol: 'TCP' }],
        env: [
          ...userEnv,
          { name: 'SLESS_ENTRYPOINT', value: filled.entrypoint },
          { name: 'SLESS_FUNCTION_NAME', value: name },
          { name: 'SLESS_NAMESPACE', value: namespace },
          { name: 'SLESS_TIMEOUT_SEC', value: String(filled.timeoutSec) },
          { name: 'PORT', value: String(FUNCTION_PORT) },
          { name: 'TMPDIR', value: '/tmp' },
          ...extraEnv,
        ],
        envFrom: (spec.envFromSecrets ?? []).map((s) => ({ secretRef: { name: s } })),
        resources: { requests: { memory }, limits: { memory } },
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
        volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      },
    ],
    volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }],
  };
}

export function functionDeployment(
  settings: Pick<ResolvedControllerSettings, 'imagePullSecrets'>,
  fn: FunctionResource,
  opts: WorkloadOptions,
): V1Deployment {
  const { name, namespace } = nameAndNamespace(fn);
  const labels = workloadLabels(fn, 'function');
  const selector = { [LABELS.function]: name, [LABELS.component]: 'function' };
  const podSpec = functionPodSpec(settings, fn, opts.imageRef);
  const container = podSpec.containers[0];
  if (container) {
    const probe = { httpGet: { path: HEALTH_PATH, port: 'http' } };
    // Start-up is watched every second (and only until the first answer): the kubelet probes readiness
    // at once when the container has started, so a new pod is Ready about a second after it listens.
    // Without it the first readiness probe came before the runtime listened and the next one 5 s later,
    // and every rollout waited for it (push-to-serve bench: rollout 8.3 s, ~5 s of it that period).
    // Readiness and liveness keep their slower periods: they run for the pod's whole life.
    container.startupProbe = { ...probe, ...STARTUP_PROBE };
    container.readinessProbe = { ...probe, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 };
    container.livenessProbe = { ...probe, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 6 };
    // A terminating pod leaves the Service's endpoints while kube-proxy on every node catches up; the
    // runtimes stop accepting at SIGTERM, so without this pause a rollout refuses the calls routed to
    // the old pod in that gap (ECONNREFUSED through /fn). The kubelet's own sleep: no binary needed.
    container.lifecycle = { preStop: { sleep: { seconds: PRE_STOP_SLEEP_SECONDS } } };
    // Then SIGTERM: the runtime stops accepting and finishes the calls it has, each within timeout_sec,
    // so scaling in (and to zero) never cuts a call: the grace covers the pause and the longest call.
    // Never below Kubernetes' default 30 s (a stored default equal to it changes no pod template).
    podSpec.terminationGracePeriodSeconds = Math.max(30, PRE_STOP_SLEEP_SECONDS + functionSpecDefaults(fn.spec).timeoutSec + 5);
    // A crashed process's last log lines become its termination message: the Function's status quotes
    // them (rollout.ts), so a SyntaxError at import says so.
    container.terminationMessagePolicy = 'FallbackToLogsOnError';
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace,
      labels,
      // Disabled is not idle: /fn answers 503 for this Deployment and never wakes it (load-endpoint.ts); with
      // queue Triggers it still runs (replicas from workload-replicas.ts) and deliveries reach it.
      ...(opts.httpEnabled ? {} : { annotations: { [ANNOTATIONS.httpDisabled]: 'true' } }),
      ownerReferences: [controllerRef(fn, 'Function')],
    },
    spec: {
      // Not part of the applied-hash (drift.ts stamped): the autoscaler changes it through the scale subresource.
      replicas: opts.replicas,
      revisionHistoryLimit: 3,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: { metadata: { labels }, spec: podSpec },
    },
  };
}

export function functionService(fn: FunctionResource): V1Service {
  const { name, namespace } = nameAndNamespace(fn);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: workloadLabels(fn, 'function'), ownerReferences: [controllerRef(fn, 'Function')] },
    spec: {
      type: 'ClusterIP',
      selector: { [LABELS.function]: name, [LABELS.component]: 'function' },
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}
