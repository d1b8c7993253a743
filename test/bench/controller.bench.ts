// Controller benchmark (not part of npm test):
//   node --import tsx test/bench/controller.bench.ts [--functions 1000] [--repositories 1]
//        [--sless-bin dist-bin/sless.js] [--soak-seconds 0] [--push-every 10] [--cpu-prof DIR] [--controller-log FILE]
//        [--schedules 1|0]  (0: HTTP-only functions; by default each also has a nightly schedule)
// R FunctionRepositories with N/R function folders each on a real git server, reconciled by a real
// `sless controller` process (one replica) against a real kube-apiserver and SeaweedFS. Nothing runs
// containers here, so a harness plays kaniko: every build Job gets a pod that "printed" an image
// digest, and a Job status that says Complete. Reported, each beside what it is compared with:
//   - steady state: seconds from creating the repositories to every Function Ready at its generation
//     and every repository Ready;
//   - API requests the controller made per function, by verb and resource, as the controller counts them at
//     the one dispatcher they all pass (sless_kube_requests_total on its /metrics), with and without leader election;
//   - the controller's RSS at steady state and its peak (VmHWM);
//   - a no-change sync: wall time, API requests, controller CPU;
//   - a push to one function of repository 0 (its sync requested as the webhook does) → that Function's
//     new codeHash, with every other repository asked to sync at the same moment (busy);
//   - a controller restart: to the first no-change sync, with the builds and writes it made (goal 0, 0);
//   - optionally a soak: a push every --push-every seconds for --soak-seconds, RSS and event-loop p99
//     sampled from the controller's /metrics.
// The setting (cluster without kube-controller-manager, S3 and git servers unless SLESS_TEST_* variables
// point at running ones, the harness) is the scale benchmarks' (scale-bench.ts); all of
// it stops on success, failure and SIGTERM (bench-lifecycle.ts).
import { parseArgs } from 'node:util';
import { runBench } from './bench-lifecycle.ts';
import { procStatus, total, writesOf } from './controller-bench-kit.ts';
import { functionFiles, functionName, loadAverage as load, log, setUpScaleBench, sleep } from './scale-bench.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '500' },
    repositories: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '900' },
    // e.g. a bin/sless.js beside a compiled dist/ (npm run build), to measure the image's memory rather than tsx's
    'sless-bin': { type: 'string' },
    'soak-seconds': { type: 'string', default: '0' },
    'push-every': { type: 'string', default: '10' },
    // 0: HTTP-only functions (an http Trigger each); 1: each also with a nightly schedule (a cron Trigger and a CronJob).
    schedules: { type: 'string', default: '1' },
    // A folder for V8 CPU profiles of the controller (--cpu-prof; written when each controller process exits).
    'cpu-prof': { type: 'string' },
    // A file that receives everything the controller prints (at SLESS_LOG_LEVEL, warn unless set).
    'controller-log': { type: 'string' },
  },
});
const N = Number(values.functions);
const R = Math.max(1, Number(values.repositories));
const TIMEOUT_MS = Number(values.timeout) * 1000;
const SOAK_S = Number(values['soak-seconds']);
const PUSH_EVERY_S = Number(values['push-every']);
const SCHEDULE = values.schedules !== '0';

const summary = (counts: ReadonlyMap<string, number>, top = 12) =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

runBench(async (life) => {
  const bench = await setUpScaleBench(life, {
    functions: N,
    repositories: R,
    schedule: SCHEDULE,
    ...(values['sless-bin'] ? { slessBin: values['sless-bin'] } : {}),
    ...(values['cpu-prof'] ? { cpuProf: values['cpu-prof'] } : {}),
    ...(values['controller-log'] ? { controllerLog: values['controller-log'] } : {}),
  });
  const { harness, repos } = bench;
  const startController = () =>
    bench.startController({
      // The harness finishes every build at once; production lets one namespace run 10 at a time.
      SLESS_MAX_BUILDS_PER_NAMESPACE: String(N * 2),
      ...(process.env.SLESS_LOG_LEVEL ? { SLESS_LOG_LEVEL: process.env.SLESS_LOG_LEVEL } : {}),
    });
  const started = Date.now();
  let c = await startController();
  const startMs = Date.now() - started;
  await sleep(1000);
  const idle = await procStatus(c.pid);
  log(`controller pid ${c.pid} watching after ${startMs} ms, RSS ${idle.rssMb.toFixed(0)} MB before any work; ${total(await bench.apiRequests())} requests so far`);
  const { requestSync } = bench;

  const countsBeforeRepo = await bench.apiRequests();
  const before = total(countsBeforeRepo);
  const t0 = Date.now();
  await bench.createRepositories();
  const { seconds: steadySec, peakHwmMb: peakHwm } = await bench.steadyState(t0, TIMEOUT_MS);
  const lastBuildSec = (harness.lastBuildSeenAt - t0) / 1000;
  await sleep(2000);
  const steady = await procStatus(c.pid);
  const countsAtSteady = await bench.apiRequests();
  const requests = total(countsAtSteady) - before;
  log(`steady state in ${steadySec.toFixed(1)} s (last build Job appeared at ${lastBuildSec.toFixed(1)} s); ${harness.builds} build Jobs; load average ${load()}`);
  const leases = [...countsAtSteady].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const leasesBefore = [...countsBeforeRepo].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const work = requests - (leases - leasesBefore);
  log(`API requests by the controller: ${requests} = ${(requests / N).toFixed(2)} per function; without leader election ${work} = ${(work / N).toFixed(2)} per function; at start (lists, watches, lease) ${before}`);
  const delta = (now: ReadonlyMap<string, number>, since: ReadonlyMap<string, number>) =>
    new Map([...now].map(([k, v]): [string, number] => [k, v - (since.get(k) ?? 0)]).filter(([, v]) => v > 0));
  log(`  by verb/resource: ${summary(delta(countsAtSteady, countsBeforeRepo))}`);
  log(`controller RSS ${steady.rssMb.toFixed(0)} MB at steady state, peak ${Math.max(peakHwm, steady.hwmMb).toFixed(0)} MB; CPU ${(steady.cpuMs / 1000).toFixed(1)} s`);

  const syncOnce = (name: string) => bench.syncOnce(name);

  // A no-change sync of repository 0.
  const resync: number[] = [];
  for (let round = 0; round < 3; round++) {
    const countsBefore = await bench.apiRequests();
    const cpuBefore = (await procStatus(c.pid)).cpuMs;
    const wall = await syncOnce(repos[0]!.name);
    await sleep(1000);
    const cpu = (await procStatus(c.pid)).cpuMs - cpuBefore;
    resync.push(wall);
    const made = delta(await bench.apiRequests(), countsBefore);
    log(`no-change sync ${round + 1}: ${wall} ms wall, ${total(made)} API requests (${summary(made)}), controller CPU ${cpu.toFixed(0)} ms`);
  }

  // One push: a code change in repository 0's first function, its sync requested while every other repository is asked to sync too.
  const pushLatency: number[] = [];
  let variant = 1;
  const pushOne = async (busy: boolean): Promise<number> => {
    const r = repos[0]!;
    const name = functionName(r.first);
    const oldHash = bench.watch.functions.get(name)?.spec?.codeHash;
    await r.clone.write(functionFiles(r.first, variant++, SCHEDULE));
    await r.clone.commitAndPush(`change ${name}`);
    const t1 = Date.now();
    const at = new Date().toISOString();
    await requestSync(r.name, at);
    if (busy) await Promise.all(repos.slice(1).map((o) => requestSync(o.name, at)));
    // From the watch: its update event arrives within milliseconds, and a GET every 25 ms loads the API server.
    for (;;) {
      const hash = bench.watch.functions.get(name)?.spec?.codeHash;
      if (hash && hash !== oldHash) return Date.now() - t1;
      if (Date.now() - t1 > 120_000) throw new Error(`the push to ${name} did not reach its Function within 120 s`);
      await sleep(10);
    }
  };
  for (let round = 0; round < 3; round++) pushLatency.push(await pushOne(repos.length > 1));
  log(`push → Function updated: ${pushLatency.join(', ')} ms${repos.length > 1 ? ` (every other of the ${repos.length} repositories asked to sync at the same moment)` : ''}`);

  // Wait for the pushed builds to settle before the restart.
  for (const t = Date.now(); ; ) {
    if (bench.watch.readyCount() === bench.watch.functions.size) break;
    if (Date.now() - t > 120_000) throw new Error('the pushed functions did not become Ready within 120 s');
    await sleep(500);
  }
  await sleep(3000);

  // Restart: stop the controller, start a new one over the same git cache, time the first no-change sync of every repository.
  await bench.stopController();
  const buildsBeforeRestart = harness.builds;
  const countsBeforeRestart = await bench.apiRequests();
  const restartAt = Date.now();
  c = await startController();
  await Promise.all(repos.map((r) => syncOnce(r.name)));
  const restartMs = Date.now() - restartAt;
  await sleep(5000);
  const restartWrites = writesOf(await bench.apiRequests(), countsBeforeRestart);
  // Our own sync requests are writes of the benchmark, not of the controller; status writes of the synced repositories are expected.
  log(
    `restart → first no-change sync of all ${repos.length} repositories: ${restartMs} ms; ${harness.builds - buildsBeforeRestart} rebuilds; ${total(restartWrites)} writes (${summary(restartWrites)})`,
  );

  const soak: Array<{ t: number; rssMb: number; loopP99Ms: number | undefined }> = [];
  if (SOAK_S > 0) {
    const end = Date.now() + SOAK_S * 1000;
    let nextPush = Date.now();
    while (Date.now() < end) {
      if (Date.now() >= nextPush) {
        nextPush += PUSH_EVERY_S * 1000;
        const r = repos[variant % repos.length]!;
        await r.clone.write(functionFiles(r.first, variant++, SCHEDULE));
        await r.clone.commitAndPush('soak');
        await requestSync(r.name, new Date().toISOString());
      }
      const lag = await c.metric('nodejs_eventloop_lag_p99_seconds');
      soak.push({ t: Math.round((Date.now() - end) / 1000 + SOAK_S), rssMb: Math.round((await procStatus(c.pid)).rssMb), loopP99Ms: lag === undefined ? undefined : Math.round(lag * 1000) });
      await sleep(5000);
    }
    const firstHalf = soak.slice(0, Math.floor(soak.length / 2)).map((s) => s.rssMb);
    const secondHalf = soak.slice(Math.floor(soak.length / 2)).map((s) => s.rssMb);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    log(
      `soak ${SOAK_S} s, a push every ${PUSH_EVERY_S} s: RSS mean ${mean(firstHalf).toFixed(0)} MB first half, ${mean(secondHalf).toFixed(0)} MB second half; event-loop p99 max ${Math.max(...soak.map((s) => s.loopP99Ms ?? 0))} ms`,
    );
  }

  console.log(
    JSON.stringify({
      functions: N,
      repositories: repos.length,
      loadAverage: load(),
      steadyStateSeconds: Number(steadySec.toFixed(1)),
      apiRequestsPerFunction: Number((requests / N).toFixed(2)),
      apiRequestsPerFunctionWithoutLease: Number((work / N).toFixed(2)),
      controllerRssMb: Math.round(steady.rssMb),
      controllerPeakRssMb: Math.round(Math.max(peakHwm, steady.hwmMb)),
      noChangeSyncMs: resync,
      pushToFunctionMs: pushLatency,
      restartToNoChangeSyncMs: restartMs,
      restartRebuilds: harness.builds - buildsBeforeRestart,
      restartWrites: total(restartWrites),
      ...(soak.length ? { soak } : {}),
    }),
  );
});
