// Controller restart benchmark (issue 15; not part of npm test):
//   node --import tsx test/bench/restart.bench.ts [--functions 1000] [--repositories 1] [--restarts 3]
//        [--sless-bin /tmp/build/bin/sless.js] [--cpu-prof DIR] [--controller-log FILE] [--memory-every MS]
//        [--request-when before|after|both]
// N functions (R repositories) reach steady state under a real `sless controller` (scale-bench.ts); then
// the controller is stopped and started again over the same git cache, `--restarts` times. Each restart:
// a sync of every repository is requested while no controller runs (as a webhook would have been), and
// the time from starting the new process to every repository's status saying it handled that request
// is the restart time; beside it the phases from the controller's log (leading, informers synced), the
// rebuilds (build Jobs the harness saw) and the writes (from the controller's sless_kube_requests_total;
// the handled requests' own status writes, one per repository, are the expected ones and shown apart), and how long until every
// work queue is empty. Baseline from the same run: a no-change sync of the running controller.
// `--request-when after` asks for the sync only once the new process leads and watches (as controller.bench
// does), `both` alternates (odd rounds before, even after).
// Memory (issue 15's RSS goal) is sampled all along (memory-probe.ts): at steady state, its peak until
// then, and where it is (V8 heap per space, native, file-backed); `memory` in the JSON is the timeline.
import { parseArgs } from 'node:util';
import { runBench } from './bench-lifecycle.ts';
import { procStatus, total, writesOf } from './controller-bench-kit.ts';
import { loadAverage, log, setUpScaleBench, sleep } from './scale-bench.ts';
import { describeSample, sampleMemory, traceMemory } from './memory-probe.ts';
import { logTimes, modulesLoadedMs, queueDepth, syncTotals } from './scale-bench-probes.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '1000' },
    repositories: { type: 'string', default: '1' },
    restarts: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '1500' },
    'sless-bin': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'controller-log': { type: 'string' },
    'memory-every': { type: 'string', default: '2000' },
    'request-when': { type: 'string', default: 'before' },
  },
});
const N = Number(values.functions);

runBench(async (life) => {
  const bench = await setUpScaleBench(life, {
    functions: N,
    repositories: Number(values.repositories),
    ...(values['sless-bin'] ? { slessBin: values['sless-bin'] } : {}),
    ...(values['cpu-prof'] ? { cpuProf: values['cpu-prof'] } : {}),
    ...(values['controller-log'] ? { controllerLog: values['controller-log'] } : {}),
  });
  let running: { pid: number; metricsPort: number } | undefined = await bench.startController();
  const idle = await sampleMemory(running);
  log(`controller started, no repositories yet: ${describeSample(idle)}`);
  const memory = traceMemory(() => running, Number(values['memory-every']));
  life.onStop(() => memory.stop());
  const t0 = Date.now();
  await bench.createRepositories();
  const steady = await bench.steadyState(t0, Number(values.timeout) * 1000);
  const atSteady = await sampleMemory(running);
  const peakUntilSteady = memory.peak();
  log(`steady state: ${N} functions in ${steady.seconds.toFixed(1)} s; ${bench.harness.builds} builds; load average ${loadAverage()}`);
  log(`  memory at steady state: ${describeSample(atSteady)}`);
  if (peakUntilSteady) log(`  memory at its highest sample (${peakUntilSteady.t} s): ${describeSample(peakUntilSteady)}`);
  // Let late reconciles (rollouts, cache catching up) finish before measuring.
  for (const t = Date.now(); (await queueDepth(bench.controller)) > 0 && Date.now() - t < 120_000; ) await sleep(1000);
  await sleep(3000);
  const settled = await sampleMemory(running);
  log(`  memory once the queues are empty: ${describeSample(settled)}; load average ${loadAverage()}`);

  const baseline: number[] = [];
  for (let i = 0; i < 3; i++) baseline.push(await bench.syncOnce(bench.repos[0]!.name));
  log(`baseline, no-change sync of the running controller: ${baseline.join(', ')} ms; load average ${loadAverage()}`);

  const results: Array<Record<string, unknown>> = [];
  for (let round = 1; round <= Number(values.restarts); round++) {
    running = undefined;
    await bench.stopController();
    const when = values['request-when'] === 'both' ? (round % 2 === 1 ? 'before' : 'after') : values['request-when'];
    const requestAll = async () => {
      const at = new Date().toISOString();
      for (const r of bench.repos) await bench.requestSync(r.name, at);
      return at;
    };
    let at = when === 'before' ? await requestAll() : '';
    const builds = bench.harness.builds;
    const counts = await bench.apiRequests();
    const spawned = Date.now();
    const c = await bench.startController({ SLESS_LOG_LEVEL: 'info' });
    running = c;
    if (when === 'after') at = await requestAll();
    const syncMs = Math.max(...(await Promise.all(bench.repos.map((r) => bench.handled(r.name, at, spawned)))));
    // Before polling /metrics below: the process keeps only its last 200 log chunks.
    const phases = logTimes(c.log, spawned, { serving: 'serving on port', leading: 'LeaderElected', synced: 'ControllerStarted' });
    const modulesMs = modulesLoadedMs(c.log);
    const syncs = await syncTotals(c);
    let idleMs: number | undefined;
    for (const t = Date.now(); Date.now() - t < 120_000; await sleep(250)) {
      if ((await queueDepth(c)) === 0) {
        idleMs = Date.now() - spawned;
        break;
      }
    }
    await sleep(5000);
    const after = await bench.apiRequests();
    const writes = writesOf(after, counts);
    const expected = writes.get('PATCH functionrepositories/status') ?? 0;
    writes.delete('PATCH functionrepositories/status');
    const reads = [...after].filter(([k]) => /^(GET|LIST) /.test(k)).reduce((a, [k, v]) => a + v - (counts.get(k) ?? 0), 0);
    const rss = await procStatus(c.pid);
    const result = {
      round,
      syncRequested: when,
      restartToNoChangeSyncMs: syncMs,
      modulesLoadedMs: modulesMs,
      servingMs: phases.serving,
      leadingMs: phases.leading,
      informersSyncedMs: phases.synced,
      queuesEmptyMs: idleMs,
      // How many syncs ran until the requested one was handled, and how long they took in all.
      syncsRun: syncs?.count,
      syncSeconds: syncs && Number(syncs.seconds.toFixed(2)),
      rebuilds: bench.harness.builds - builds,
      writes: total(writes),
      requestedSyncStatusWrites: expected,
      reads,
      rssMb: Math.round(rss.rssMb),
      loadAverage: loadAverage(),
    };
    results.push(result);
    log(
      `restart ${round} (sync requested ${when} the start): first no-change sync after ${syncMs} ms (modules loaded at ${modulesMs} ms, HTTP serving at ${phases.serving} ms, leading at ${phases.leading} ms, informers synced at ${phases.synced} ms, ` +
        `${syncs?.count} sync(s) taking ${syncs?.seconds.toFixed(2)} s, queues empty at ${idleMs ?? '>120000'} ms); ` +
        `${result.rebuilds} rebuilds; ${result.writes} writes besides the ${expected} handled-request status writes; ${reads} reads; RSS ${result.rssMb} MB; load average ${result.loadAverage}`,
    );
    if (result.writes > 0) log(`  writes: ${[...writes].map(([k, v]) => `${k}=${v}`).join(', ')}`);
  }
  await memory.stop();
  console.log(
    JSON.stringify({
      functions: N,
      repositories: bench.repos.length,
      steadyStateSeconds: steady.seconds,
      memoryAtSteadyState: atSteady,
      memoryPeakUntilSteadyState: peakUntilSteady,
      memorySettled: settled,
      baselineNoChangeSyncMs: baseline,
      restarts: results,
      memory: memory.samples,
    }),
  );
});
