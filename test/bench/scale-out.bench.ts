// Scaling out pays (issue 29), on the real node (not part of any test run; root, `.ci/install.d/25-node.sh`
// and the test images):
//   flock /work/.bench.lock flock /work/.node.lock npx node --import tsx test/bench/scale-out.bench.ts [--seconds 60] [--callers 8]
// A CPU-bound Python function (the GIL keeps one process on one core) called by 8 callers at once for
// a minute, through a real `sless controller` (the e2e kit's host process): once with `scale: {max: 2,
// concurrency: 1}` (the autoscaler adds the second pod), once pinned at 1 replica (`min: 1, max: 1`).
// Reports calls per second of each, their ratio (goal ≥ 1.6 on a 2-core machine), when the second
// replica served, and failed calls. Starts the node, git and s3 services unless SLESS_TEST_* point at running ones.
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { TestService } from '../run.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, callers: { type: 'string', default: '8' } } });
const SECONDS = Number(values.seconds);
const CALLERS = Number(values.callers);
const stops: Array<() => Promise<void>> = [];
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function service(modulePath: string, wanted: string): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const started = await s.start();
  stops.unshift(started.stop);
  Object.assign(process.env, started.env);
}

// ~0.1 s of pure-Python CPU per call.
const BURN = `def handle(event, context):\n    n = 0\n    for i in range(600000):\n        n += i * i % 7\n    return {"n": n}\n`;
const yaml = (name: string, scale: string): string => `name: ${name}\nruntime: python3.11\nentrypoint: handler.handle\nscale: ${scale}\n`;

interface Result {
  readonly calls: number;
  readonly failures: string[];
  readonly perSecond: number;
  readonly secondReplicaMs: number | undefined;
  readonly p50Ms: number;
}

async function main(): Promise<void> {
  await service('../services/node.ts', 'SLESS_TEST_NODE');
  await service('../services/git.ts', 'SLESS_TEST_GIT_URL');
  await service('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT');
  const { setupNodeKit } = await import('../e2e-node/sless-kit.ts');
  const { AppsV1Api } = await import('@kubernetes/client-node');
  const kit = await setupNodeKit('bench-scale');
  stops.unshift(() => kit.dispose());
  const apps = kit.kc.makeApiClient(AppsV1Api);
  const c = await kit.startController();
  await kit.push(
    {
      'functions/burn2/function.yaml': yaml('burn2', '{min: 1, max: 2, concurrency: 1}'),
      'functions/burn2/handler.py': BURN,
      'functions/burn1/function.yaml': yaml('burn1', '{min: 1, max: 1, concurrency: 1}'),
      'functions/burn1/handler.py': BURN,
    },
    'burners',
  );
  await kit.createRepository('fns');
  for (const name of ['burn1', 'burn2']) await kit.waitFunction(name, (f) => f.status?.phase === 'Ready', 600_000);
  log('both functions Ready');

  const run = async (name: string): Promise<Result> => {
    const failures: string[] = [];
    const durations: number[] = [];
    const start = performance.now();
    const until = start + SECONDS * 1000;
    let secondReplicaMs: number | undefined;
    const watch = (async () => {
      while (performance.now() < until) {
        const d = await apps.readNamespacedDeployment({ namespace: kit.ns, name });
        if (secondReplicaMs === undefined && (d.status?.availableReplicas ?? 0) >= 2) secondReplicaMs = performance.now() - start;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    await Promise.all([
      watch,
      ...Array.from({ length: CALLERS }, async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          try {
            const res = await fetch(`${c.url}/fn/${kit.ns}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
            const text = await res.text();
            if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 120)}`);
            else durations.push(performance.now() - t0);
          } catch (err) {
            failures.push(String(err));
          }
        }
      }),
    ]);
    const elapsed = (performance.now() - start) / 1000;
    durations.sort((a, b) => a - b);
    return { calls: durations.length, failures, perSecond: durations.length / elapsed, secondReplicaMs, p50Ms: durations[Math.floor(durations.length / 2)] ?? 0 };
  };

  // Warm both (one call each), then the pinned one first, so the scaled one starts from one replica too.
  for (const name of ['burn1', 'burn2']) await fetch(`${c.url}/fn/${kit.ns}/${name}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  const pinned = await run('burn1');
  log(`pinned at 1: ${pinned.calls} calls, ${pinned.perSecond.toFixed(2)}/s, p50 ${pinned.p50Ms.toFixed(0)} ms, ${pinned.failures.length} failed, load ${os.loadavg()[0]?.toFixed(1)}`);
  const scaled = await run('burn2');
  log(`max 2:       ${scaled.calls} calls, ${scaled.perSecond.toFixed(2)}/s, p50 ${scaled.p50Ms.toFixed(0)} ms, ${scaled.failures.length} failed, second replica serving after ${scaled.secondReplicaMs === undefined ? 'never' : `${(scaled.secondReplicaMs / 1000).toFixed(1)} s`}, load ${os.loadavg()[0]?.toFixed(1)}`);
  log(`throughput ratio ${(scaled.perSecond / pinned.perSecond).toFixed(2)}x (goal >= 1.6x); failures ${[...pinned.failures, ...scaled.failures].slice(0, 5).join(' | ') || 'none'}`);
}

try {
  await main();
} finally {
  for (const stop of stops) await stop().catch(() => undefined);
}
