// Where a push-to-serve run's seconds went, from what the cluster recorded: the build pod's and the new
// function pod's conditions and container start/finish times (the API server keeps whole seconds), and
// kaniko's own log lines with the kubelet's timestamps (nanoseconds). Used by push-to-serve.bench.ts.
import { CoreV1Api, type KubeConfig, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';

/** One moment of a run: seconds after the push started. */
export interface Mark {
  readonly what: string;
  readonly at: number;
}

const toMs = (t: Date | string | undefined): number => (t === undefined ? NaN : new Date(t).getTime());

function podMarks(pod: V1Pod, prefix: string, t0: number): Mark[] {
  const marks: Mark[] = [];
  const add = (what: string, t: Date | string | undefined): void => {
    const ms = toMs(t);
    if (Number.isFinite(ms)) marks.push({ what: `${prefix}${what}`, at: (ms - t0) / 1000 });
  };
  add('pod created', pod.metadata?.creationTimestamp);
  for (const c of pod.status?.conditions ?? []) if (c.status === 'True') add(c.type, c.lastTransitionTime);
  const containers = (list: V1ContainerStatus[] | undefined): void => {
    for (const s of list ?? []) {
      add(`${s.name} started`, s.state?.terminated?.startedAt ?? s.state?.running?.startedAt);
      add(`${s.name} finished`, s.state?.terminated?.finishedAt);
    }
  };
  containers(pod.status?.initContainerStatuses);
  containers(pod.status?.containerStatuses);
  return marks;
}

/** kaniko's lines that open a phase (pulling, unpacking, each command, snapshots, the tarball). */
const KANIKO_PHASES = /Retrieving image|Unpacking rootfs|Skipping unpacking|Taking snapshot|Using caching version|No cached layer|^.{0,40}(RUN|COPY|WORKDIR|ENV|USER) |Pushing layer|Saving image|Skipping push|Built cross stage|Executing \d+ build/;

function kanikoMarks(log: string, t0: number): Mark[] {
  const marks: Mark[] = [];
  for (const line of log.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const at = toMs(line.slice(0, space));
    const text = line.slice(space + 1).replace(/^.*?level=\w+ msg="?/, '').replace(/"$/, '');
    if (Number.isFinite(at) && KANIKO_PHASES.test(text)) marks.push({ what: `  kaniko: ${text.slice(0, 90)}`, at: (at - t0) / 1000 });
  }
  return marks;
}

async function newestPod(core: CoreV1Api, namespace: string, selector: string): Promise<V1Pod | undefined> {
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
  return pods.sort((a, b) => toMs(b.metadata?.creationTimestamp) - toMs(a.metadata?.creationTimestamp))[0];
}

/**
 * The newest build pod matching `buildSelector` and the newest function pod matching `fnSelector`, as
 * marks in time order (seconds after `t0`, the push).
 */
export async function runTimeline(
  kc: KubeConfig,
  build: { namespace: string; selector: string },
  fn: { namespace: string; selector: string },
  t0: number,
): Promise<Mark[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const marks: Mark[] = [];
  const buildPod = await newestPod(core, build.namespace, build.selector);
  if (buildPod) {
    marks.push(...podMarks(buildPod, 'build ', t0));
    const log = await core
      .readNamespacedPodLog({ namespace: build.namespace, name: buildPod.metadata!.name!, container: 'kaniko', timestamps: true })
      .catch(() => '');
    marks.push(...kanikoMarks(String(log), t0));
  }
  const fnPod = await newestPod(core, fn.namespace, fn.selector);
  if (fnPod) marks.push(...podMarks(fnPod, 'function ', t0));
  return marks.sort((a, b) => a.at - b.at);
}

export function formatTimeline(marks: readonly Mark[]): string {
  return marks.map((m) => `    ${m.at.toFixed(2).padStart(7)} s  ${m.what}`).join('\n');
}
