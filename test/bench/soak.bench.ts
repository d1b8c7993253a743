// Soak benchmark (issue 15; not part of npm test):
//   node --import tsx test/bench/soak.bench.ts [--functions 100] [--repositories 10] [--seconds 1800]
//        [--push-every 10] [--sless-bin /tmp/build/bin/sless.js] [--cpu-prof DIR]
// N functions (R repositories) reach steady state under a real `sless controller` (scale-bench.ts); then
// every --push-every seconds one function's code changes in the next repository (round robin) and its
// sync is requested as a webhook does. Every 5 s: the controller's RSS (/proc) and event-loop delay (p99
// and max since the previous sample, prom-client's gauges on /metrics). Reported: the samples' first and
// last thirds side by side, a least-squares slope per minute (flat = no growth trend), the p99 of the
// loop-delay samples, and push → Function updated latencies (first minute beside the last).
import { parseArgs } from 'node:util';
import { runBench } from './bench-lifecycle.ts';
import { procStatus } from './controller-bench-kit.ts';
import { functionFiles, functionName, loadAverage, log, setUpScaleBench, sleep } from './scale-bench.ts';
import { loopDelay } from './scale-bench-probes.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '100' },
    repositories: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '1800' },
    'push-every': { type: 'string', default: '10' },
    timeout: { type: 'string', default: '1500' },
    'sless-bin': { type: 'string' },
    // V8 CPU profiles of the controller (written when it exits), to find what holds the event loop.
    'cpu-prof': { type: 'string' },
  },
});
const N = Number(values.functions);
const SECONDS = Number(values.seconds);
const PUSH_EVERY_MS = Number(values['push-every']) * 1000;

interface Sample {
  readonly t: number;
  readonly rssMb: number;
  readonly loopP99Ms: number | undefined;
  readonly loopMaxMs: number | undefined;
  readonly load: number;
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const percentile = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

runBench(async (life) => {
  const bench = await setUpScaleBench(life, {
    functions: N,
    repositories: Number(values.repositories),
    ...(values['sless-bin'] ? { slessBin: values['sless-bin'] } : {}),
    ...(values['cpu-prof'] ? { cpuProf: values['cpu-prof'] } : {}),
  });
  await bench.startController();
  const t0 = Date.now();
  await bench.createRepositories();
  const steady = await bench.steadyState(t0, Number(values.timeout) * 1000);
  log(`steady state: ${N} functions in ${bench.repos.length} repositories in ${steady.seconds.toFixed(1)} s; load average ${loadAverage()}`);

  const samples: Sample[] = [];
  const pushes: Array<{ t: number; ms: number | undefined }> = [];
  const variants = new Map<string, number>();
  let pushIndex = 0;
  const start = Date.now();
  const end = start + SECONDS * 1000;
  let nextPush = start;
  let nextSample = start;
  const inFlight = new Set<Promise<void>>();
  /** One push: a code change of the repository's next function, its sync requested; resolves when the Function carries it. */
  const push = async () => {
    const r = bench.repos[pushIndex % bench.repos.length]!;
    const i = r.first + (Math.floor(pushIndex / bench.repos.length) % r.count);
    pushIndex++;
    const name = functionName(i);
    const variant = (variants.get(name) ?? 0) + 1;
    variants.set(name, variant);
    const t = Date.now();
    const oldHash = (await bench.getFunction(name)).spec?.codeHash;
    await r.clone.write(functionFiles(i, variant));
    await r.clone.commitAndPush(`soak ${name} v${variant}`);
    const pushed = Date.now();
    await bench.requestSync(r.name, new Date().toISOString());
    let ms: number | undefined;
    while (Date.now() - pushed < 120_000) {
      const hash = (await bench.getFunction(name)).spec?.codeHash;
      if (hash && hash !== oldHash) {
        ms = Date.now() - pushed;
        break;
      }
      await sleep(100);
    }
    pushes.push({ t: Math.round((t - start) / 1000), ms });
  };
  while (Date.now() < end) {
    if (Date.now() >= nextPush) {
      nextPush += PUSH_EVERY_MS;
      const p = push().catch((err: unknown) => log(`push failed: ${err instanceof Error ? err.message : String(err)}`));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    if (Date.now() >= nextSample) {
      nextSample += 5000;
      const [status, loop] = await Promise.all([procStatus(bench.controller.pid), loopDelay(bench.controller)]);
      samples.push({ t: Math.round((Date.now() - start) / 1000), rssMb: Math.round(status.rssMb), loopP99Ms: loop?.p99Ms, loopMaxMs: loop?.maxMs, load: Number(loadAverage().split(' ')[0]) });
      if (samples.length % 60 === 0) {
        const last = samples.at(-1)!;
        log(`soak ${last.t} s: RSS ${last.rssMb} MB, loop p99 ${last.loopP99Ms?.toFixed(0)} ms, ${pushes.length} pushes done; load average ${loadAverage()}`);
      }
    }
    await sleep(200);
  }
  await Promise.all([...inFlight]);

  const third = Math.max(1, Math.floor(samples.length / 3));
  const first = samples.slice(0, third);
  const last = samples.slice(-third);
  const loops = samples.flatMap((s) => (s.loopP99Ms === undefined ? [] : [s.loopP99Ms]));
  const rssSlope = slope(samples.map((s) => [s.t / 60, s.rssMb] as const));
  const loopSlope = slope(samples.flatMap((s) => (s.loopP99Ms === undefined ? [] : [[s.t / 60, s.loopP99Ms] as const])));
  const latencies = (from: number, to: number) => pushes.filter((p) => p.t >= from && p.t < to && p.ms !== undefined).map((p) => p.ms!);
  const lost = pushes.filter((p) => p.ms === undefined).length;
  log(
    `soak ${SECONDS} s, a push every ${PUSH_EVERY_MS / 1000} s (${pushes.length} pushes, ${lost} not applied within 120 s): ` +
      `RSS ${mean(first.map((s) => s.rssMb)).toFixed(0)} MB first third, ${mean(last.map((s) => s.rssMb)).toFixed(0)} MB last third, slope ${rssSlope.toFixed(2)} MB/min; ` +
      `loop delay p99 per sample: median ${percentile(loops, 50).toFixed(1)} ms, p99 of samples ${percentile(loops, 99).toFixed(1)} ms, ` +
      `first third ${mean(first.flatMap((s) => (s.loopP99Ms === undefined ? [] : [s.loopP99Ms]))).toFixed(1)} ms, last third ${mean(last.flatMap((s) => (s.loopP99Ms === undefined ? [] : [s.loopP99Ms]))).toFixed(1)} ms, slope ${loopSlope.toFixed(2)} ms/min; ` +
      `push → Function updated median ${percentile(latencies(0, 60), 50)} ms in the first minute, ${percentile(latencies(SECONDS - 60, SECONDS), 50)} ms in the last; ` +
      `load average ${mean(first.map((s) => s.load)).toFixed(1)} first third, ${mean(last.map((s) => s.load)).toFixed(1)} last third`,
  );
  console.log(JSON.stringify({ functions: N, repositories: bench.repos.length, seconds: SECONDS, steadyStateSeconds: steady.seconds, rssSlopeMbPerMin: rssSlope, loopP99SlopeMsPerMin: loopSlope, samples, pushes }));
});
