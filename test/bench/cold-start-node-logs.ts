// The node's own moments of one pod's start, from the kubelet's and containerd's logs (SLESS_TEST_NODE_LOGS,
// both on this host's clock, microseconds or better): what the pod watch cannot see, because the kubelet
// writes the pod's status only after its next relist (PLEG, every second) finds the container running.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface NodeMoments {
  /** The kubelet's volume manager taking the pod's volumes (none since function pods have no volume). */
  readonly volumeWaitBegan?: number;
  /** The `tmp` emptyDir set up (the pod worker waits for every volume before the sandbox). */
  readonly volumeMounted?: number;
  readonly sandboxAsked?: number;
  /** The pause container and the pod network (CNI) up. */
  readonly sandboxUp?: number;
  /** containerd's StartContainer returned: the runtime process runs. */
  readonly containerStarted?: number;
  /** The kubelet's relist saw the container running ("Observed pod startup duration"): then it writes the status. */
  readonly kubeletSawRunning?: number;
}

/** klog's `I1206 14:43:54.042913` (no year; this host logs in UTC) → epoch ms. */
function klogTime(line: string, year: number): number | undefined {
  const m = /^[IWE](\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d+)/.exec(line);
  return m ? Date.parse(`${year}-${m[1]}-${m[2]}T${m[3]}Z`) : undefined;
}
const containerdTime = (line: string): number | undefined => {
  const m = /^time="([^"]+)"/.exec(line);
  return m ? Date.parse(m[1]!) : undefined;
};

export function nodeMoments(kubeletLog: string, containerdLog: string, namespace: string, pod: string, year = new Date().getUTCFullYear()): NodeMoments {
  const kubelet = kubeletLog.split('\n').filter((l) => l.includes(`pod="${namespace}/${pod}"`) || l.includes(`pod=\\"${namespace}/${pod}\\"`));
  const kAt = (re: RegExp) => {
    const line = kubelet.find((l) => re.test(l));
    return line === undefined ? undefined : klogTime(line, year);
  };
  const cd = containerdLog.split('\n');
  const cAt = (re: RegExp) => {
    const line = cd.find((l) => re.test(l));
    return line === undefined ? undefined : containerdTime(line);
  };
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const sandboxLine = cd.find((l) => l.includes(`PodSandboxMetadata{Name:${pod},`) && l.includes('returns sandbox id'));
  const sandboxId = sandboxLine && /returns sandbox id \\"([0-9a-f]+)\\"/.exec(sandboxLine)?.[1];
  const containerLine = sandboxId ? cd.find((l) => l.includes(`CreateContainer within sandbox \\"${sandboxId}\\"`) && l.includes('returns container id')) : undefined;
  const containerId = containerLine && /returns container id \\"([0-9a-f]+)\\"/.exec(containerLine)?.[1];
  return {
    volumeWaitBegan: kAt(/VerifyControllerAttachedVolume started/),
    volumeMounted: kAt(/MountVolume\.SetUp succeeded/),
    sandboxAsked: cAt(new RegExp(`RunPodSandbox for &PodSandboxMetadata\\{Name:${esc(pod)},(?!.*returns)`)),
    sandboxUp: sandboxLine ? containerdTime(sandboxLine) : undefined,
    containerStarted: containerId ? cAt(new RegExp(`StartContainer for \\\\"${containerId}\\\\" returns successfully`)) : undefined,
    kubeletSawRunning: kAt(/Observed pod startup duration/),
  };
}

/** Reads the two logs of the node service (SLESS_TEST_NODE_LOGS); empty moments when it does not say where. */
export async function readNodeMoments(namespace: string, pod: string): Promise<NodeMoments> {
  const dir = process.env.SLESS_TEST_NODE_LOGS;
  if (!dir) return {};
  const [kubelet, containerd] = await Promise.all(['kubelet.log', 'containerd.log'].map((f) => readFile(path.join(dir, f), 'utf8').catch(() => '')));
  return nodeMoments(kubelet ?? '', containerd ?? '', namespace, pod);
}
