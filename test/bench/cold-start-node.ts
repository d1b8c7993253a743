// Cold start on the real node (issue 29), run by `cold-start.bench.ts --node [wakes=10]` under
// `flock /work/.node.lock flock /work/.bench.lock` (not part of npm test; root, the node's test images).
//
// A real `sless controller` (the e2e kit's host process) serves two functions with `scale: {min: 0,
// idle: 10s}`: (a) a Node.js one, (b) a Python one with a requirements.txt (humanize from the local
// wheel index, imported at module load). Each round waits until the function has idled to zero (the
// autoscaler's own write; its terminating pod is then deleted at once so the rounds go faster: not
// timed), then sends one call through `/fn` and times its phases, in ms after the call was sent:
//   scale written      the controller's log line "scaled up to 1 replica: woken by a call" (its time)
//   pod created        a pod watch sees the new pod
//   pod scheduled      ... sees spec.nodeName (the PodScheduled condition)
//   runtime serving    the runtime's "serving ..." line, by the container log's own timestamp (containerd's, ns)
//   volume wait began .. kubelet saw running: the node's own logs (cold-start-node-logs.ts): the kubelet
//                      taking a pod's volumes and mounting them (function pods have none since this bench
//                      showed what the tmp emptyDir cost), the sandbox (pause + CNI) asked and up,
//                      containerd's StartContainer returned, the kubelet's relist seeing it running
//   status: IP, running  ... the watch sees status.podIP and containerStatuses[0].state.running (one
//                      status write of the kubelet's; startedAt is second-precision: kept beside)
//   pod answers        this bench's own GET <podIP>:8080/health, every 10 ms from the pod IP on
//   woken              the controller's "woke in N ms" log line (/fn's own probe saw it serve)
//   first answer       the call's response
//   kubelet Ready      the watch sees the Ready condition (after the first answer when /fn routes to pods)
// The two functions' rounds alternate, so one idles down while the other is measured.
import os from 'node:os';
import { AppsV1Api, CoreV1Api, Watch, type V1Pod } from '@kubernetes/client-node';
import type { TestService } from '../run.ts';
import { readNodeMoments } from './cold-start-node-logs.ts';

const PHASES = [
  'scale written',
  'pod created',
  'pod scheduled',
  'volume wait began',
  'volume mounted',
  'sandbox asked',
  'sandbox up',
  'container started',
  'runtime serving',
  'kubelet saw running',
  'status: IP, running',
  'pod answers',
  'woken',
  'first answer',
  'kubelet Ready',
] as const;
type Phase = (typeof PHASES)[number];
type Marks = Partial<Record<Phase, number>>;

function pct(values: number[], q: number): number {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number) : NaN;
}
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');

async function service(modulePath: string, wanted: string, stops: Array<() => Promise<void>>): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const started = await s.start();
  stops.unshift(started.stop);
  Object.assign(process.env, started.env);
}

/** The controller's JSON log lines since `from` whose msg matches, with their time (epoch ms). */
function logTimes(output: string, from: number, msg: RegExp): number[] {
  const times: number[] = [];
  for (const line of output.slice(from).split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const o = JSON.parse(line) as { msg?: string; time?: number };
      if (o.msg && msg.test(o.msg) && typeof o.time === 'number') times.push(o.time);
    } catch {
      // not a log line of the controller's
    }
  }
  return times;
}

interface Case {
  readonly fn: string;
  readonly what: string;
  readonly files: Record<string, string>;
  readonly goalMs: number;
  readonly marks: Marks[];
  readonly startedAtSecond: number[];
}

export async function coldStartOnNode(wakes: number, only?: 'node' | 'python'): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    await service('../services/node.ts', 'SLESS_TEST_NODE', stops);
    await service('../services/git.ts', 'SLESS_TEST_GIT_URL', stops);
    await service('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT', stops);
    const { setupNodeKit } = await import('../e2e-node/sless-kit.ts');
    const { requireNode, startWheelIndex } = await import('../e2e-node/node-kit.ts');
    const { hostAddress } = requireNode();
    const wheels = await startWheelIndex();
    stops.unshift(() => wheels.stop());
    const kit = await setupNodeKit('bench-cold');
    stops.unshift(() => kit.dispose());
    const controller = await kit.startController();
    const scale = 'scale: {min: 0, idle: 10s}\n';
    const all: Case[] = [
      {
        fn: 'nodecold',
        what: '(a) Node.js function',
        goalMs: 1500,
        files: {
          'functions/nodecold/function.yaml': `runtime: nodejs20\nentrypoint: handler.handle\n${scale}`,
          'functions/nodecold/handler.js': 'exports.handle = async () => ({ pid: process.pid });\n',
        },
        marks: [],
        startedAtSecond: [],
      },
      {
        fn: 'pycold',
        what: '(b) Python function with requirements.txt',
        goalMs: 2500,
        files: {
          'functions/pycold/function.yaml': `runtime: python3.11\nentrypoint: handler.handle\n${scale}`,
          'functions/pycold/requirements.txt': `--no-index\n--find-links ${wheels.url}\n--trusted-host ${hostAddress}\nhumanize==4.9.0\n`,
          'functions/pycold/handler.py': 'import humanize\n\n\ndef handle(event, context):\n    return {"size": humanize.naturalsize(1000000)}\n',
        },
        marks: [],
        startedAtSecond: [],
      },
    ];
    const cases = all.filter((c) => !only || (only === 'node') === (c.fn === 'nodecold'));
    await kit.push(Object.assign({}, ...cases.map((c) => c.files)) as Record<string, string>, 'cold functions');
    await kit.createRepository('fns');
    for (const c of cases) await kit.waitFunction(c.fn, (f) => f.status?.phase === 'Ready', 600_000);
    // A min: 0 function is Ready once built (it serves on demand): one call each first, so that no
    // measured wake pulls the image (the node keeps it from then on).
    for (const c of cases) {
      const res = await fetch(`${controller.url}/fn/${kit.ns}/${c.fn}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (res.status !== 200) throw new Error(`${c.fn} warm-up call: ${res.status} ${await res.text()}`);
    }
    log(`built, Ready and called once: ${cases.map((c) => c.fn).join(', ')} (load ${load()})`);

    const apps = kit.kc.makeApiClient(AppsV1Api);
    const core = kit.kc.makeApiClient(CoreV1Api);
    // Every pod event of the namespace, with the time this process saw it.
    const seen: Array<{ at: number; pod: V1Pod }> = [];
    const watch = await new Watch(kit.kc).watch(
      `/api/v1/namespaces/${kit.ns}/pods`,
      {},
      (_type, pod: V1Pod) => seen.push({ at: Date.now(), pod }),
      (err) => err && log(`pod watch ended: ${String(err)}`),
    );
    stops.unshift(async () => watch.abort());

    const atZero = async (fn: string): Promise<void> => {
      for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(250)) {
        const d = await apps.readNamespacedDeployment({ namespace: kit.ns, name: fn });
        if (d.spec?.replicas !== 0) continue;
        const pods = (await core.listNamespacedPod({ namespace: kit.ns, labelSelector: `sless.kube5s.ru/function=${fn}` })).items;
        if (pods.length === 0) return;
        // Scaled to zero by the autoscaler: its pod sits out the preStop pause nobody needs here.
        for (const p of pods) await core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: kit.ns, gracePeriodSeconds: 0 }).catch(() => undefined);
      }
      throw new Error(`${fn} did not go to zero in 180 s`);
    };

    const wakeOnce = async (c: Case, round: number): Promise<void> => {
      await atZero(c.fn);
      // The controller's watches must see the pod gone before the next call (else it is routed to it).
      await sleep(1_000);
      const logFrom = controller.output().length;
      const seenFrom = seen.length;
      const t0 = Date.now();
      let podIp: string | undefined;
      let podAnswered: number | undefined;
      let done = false;
      const hostProbe = (async () => {
        while (!done && podAnswered === undefined) {
          if (podIp) {
            const ok = await fetch(`http://${podIp}:8080/health`, { signal: AbortSignal.timeout(500) }).then(
              (r) => r.ok,
              () => false,
            );
            if (ok) podAnswered = Date.now();
          }
          await sleep(10);
        }
      })();
      const ipWatcher = (async () => {
        while (!done && !podIp) {
          podIp = seen.slice(seenFrom).find((e) => e.pod.metadata?.labels?.['sless.kube5s.ru/function'] === c.fn && e.pod.status?.podIP)?.pod.status?.podIP;
          await sleep(5);
        }
      })();
      const res = await fetch(`${controller.url}/fn/${kit.ns}/${c.fn}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const text = await res.text();
      const answered = Date.now();
      if (res.status !== 200) throw new Error(`${c.fn} wake ${round}: ${res.status} ${text}`);
      // Until the kubelet's Ready (for the last phase), at most 30 s more.
      const mine = () => seen.slice(seenFrom).filter((e) => e.pod.metadata?.labels?.['sless.kube5s.ru/function'] === c.fn);
      const first = (ok: (p: V1Pod) => boolean) => mine().find((e) => ok(e.pod))?.at;
      const isReady = (p: V1Pod) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && first(isReady) === undefined; ) await sleep(50);
      done = true;
      await Promise.all([hostProbe, ipWatcher]);
      const out = controller.output();
      const m: Marks = {
        'scale written': logTimes(out, logFrom, new RegExp(`/${c.fn} scaled up to 1 replica: woken by a call`))[0],
        'pod created': first(() => true),
        'pod scheduled': first((p) => Boolean(p.spec?.nodeName)),
        'status: IP, running': first((p) => Boolean(p.status?.podIP && p.status?.containerStatuses?.[0]?.state?.running)),
        'pod answers': podAnswered,
        woken: logTimes(out, logFrom, new RegExp(`/${c.fn} woke in \\d+ ms`))[0],
        'first answer': answered,
        'kubelet Ready': first(isReady),
      };
      for (const k of PHASES) if (m[k] !== undefined) m[k] = (m[k] as number) - t0;
      c.marks.push(m);
      const pod = mine().at(-1)?.pod;
      const podLog = await core
        .readNamespacedPodLog({ namespace: kit.ns, name: pod?.metadata?.name ?? '', container: 'function', timestamps: true })
        .catch(() => '');
      const serving = /^(\S+) sless-runtime: serving /m.exec(podLog)?.[1];
      if (serving) m['runtime serving'] = Date.parse(serving) - t0;
      const node = await readNodeMoments(kit.ns, pod?.metadata?.name ?? '');
      const nodeMarks: Array<[Phase, number | undefined]> = [
        ['volume wait began', node.volumeWaitBegan],
        ['volume mounted', node.volumeMounted],
        ['sandbox asked', node.sandboxAsked],
        ['sandbox up', node.sandboxUp],
        ['container started', node.containerStarted],
        ['kubelet saw running', node.kubeletSawRunning],
      ];
      for (const [k, at] of nodeMarks) if (at !== undefined) m[k] = at - t0;
      const created = Date.parse(String(pod?.metadata?.creationTimestamp ?? ''));
      const startedAt = Date.parse(String(pod?.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? ''));
      c.startedAtSecond.push(startedAt - created);
      log(`${c.fn} wake ${round}: ${PHASES.map((k) => `${k} ${m[k] === undefined ? '-' : Math.round(m[k] as number)}`).join(', ')} (load ${os.loadavg()[0]!.toFixed(2)})`);
    };

    for (let i = 1; i <= wakes; i++) for (const c of cases) await wakeOnce(c, i);

    console.log(`\ncold start through /fn on the real node, ${wakes} wakes each, ms after the call was sent (load average ${load()})`);
    for (const c of cases) {
      const total = c.marks.map((m) => m['first answer'] ?? NaN);
      const p50 = pct(total, 0.5);
      console.log(`\n${c.what}: first answer p50 ${p50.toFixed(0)} ms, p95 ${pct(total, 0.95).toFixed(0)} ms (goal p50 < ${c.goalMs} ms: ${p50 < c.goalMs ? 'met' : 'missed'})`);
      let before = 0;
      for (const k of PHASES) {
        const at = c.marks.map((m) => m[k] ?? NaN);
        const p = pct(at, 0.5);
        console.log(`  ${k.padEnd(18)} at p50 ${p.toFixed(0).padStart(5)}  p95 ${pct(at, 0.95).toFixed(0).padStart(5)}   (+${(p - before).toFixed(0)} over the phase before)`);
        if (Number.isFinite(p) && k !== 'kubelet Ready') before = p;
      }
      console.log(`  pod creationTimestamp -> startedAt (second-precision): p50 ${pct(c.startedAtSecond, 0.5).toFixed(0)} ms`);
    }
  } finally {
    for (const stop of stops) await stop().catch((e: unknown) => console.error('stop failed:', e));
  }
}
