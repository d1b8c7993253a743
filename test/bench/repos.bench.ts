// Many-repositories benchmark (issue 15; not part of npm test):
//   node --import tsx test/bench/repos.bench.ts [--repositories 100] [--functions 1000] [--rounds 3]
//        [--sless-bin /tmp/build/bin/sless.js] [--controller-log FILE] [--cpu-prof DIR]
// R FunctionRepositories with N/R functions each (scale-bench.ts) under a real `sless controller`:
//   - steady state: from creating the repositories to every Function Ready and every repository Ready;
//   - one push among busy repositories: a code change in one function of repository 0 → that Function's
//     new codeHash, its sync requested as a push webhook does (naming the pushed head). Baseline from the
//     same run: the same push while no other repository syncs ("single repository"); then with a sync of
//     every other repository requested just before it, without a head (routine syncs: they are busy when
//     the push arrives). Median of --rounds each, and the ratio.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runBench } from './bench-lifecycle.ts';
import { procStatus } from './controller-bench-kit.ts';
import { functionFiles, functionName, loadAverage, log, setUpScaleBench, sleep } from './scale-bench.ts';
import { queueDepth, syncTotals } from './scale-bench-probes.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '1000' },
    repositories: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '1500' },
    'sless-bin': { type: 'string' },
    // A file that receives everything the controller prints (at SLESS_LOG_LEVEL, warn unless set).
    'controller-log': { type: 'string' },
    // A folder for V8 CPU profiles of the controller (written when the controller exits).
    'cpu-prof': { type: 'string' },
  },
});
const N = Number(values.functions);
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

runBench(async (life) => {
  const bench = await setUpScaleBench(life, {
    functions: N,
    repositories: Number(values.repositories),
    ...(values['sless-bin'] ? { slessBin: values['sless-bin'] } : {}),
    ...(values['controller-log'] ? { controllerLog: values['controller-log'] } : {}),
    ...(values['cpu-prof'] ? { cpuProf: values['cpu-prof'] } : {}),
  });
  await bench.startController(process.env.SLESS_LOG_LEVEL ? { SLESS_LOG_LEVEL: process.env.SLESS_LOG_LEVEL } : {});
  const t0 = Date.now();
  await bench.createRepositories();
  const steady = await bench.steadyState(t0, Number(values.timeout) * 1000);
  const rss = await procStatus(bench.controller.pid);
  log(
    `steady state: ${bench.repos.length} repositories x ${bench.repos[0]!.count} functions in ${steady.seconds.toFixed(1)} s; RSS ${rss.rssMb.toFixed(0)} MB (peak ${Math.max(steady.peakHwmMb, rss.hwmMb).toFixed(0)} MB); load average ${loadAverage()}`,
  );
  const settle = async () => {
    for (const t = Date.now(); (await queueDepth(bench.controller)) > 0 && Date.now() - t < 120_000; ) await sleep(500);
    await sleep(2000);
  };
  await settle();

  const target = bench.repos[0]!;
  let variant = 0;
  /** A code change of repository 0's first function; ms from the push to its Function carrying it. */
  const pushOne = async (busy: boolean): Promise<number> => {
    const name = functionName(target.first);
    const oldHash = bench.watch.functions.get(name)?.spec?.codeHash;
    await target.clone.write(functionFiles(target.first, ++variant));
    const head = await target.clone.commitAndPush(`change ${name}`);
    const at = new Date().toISOString();
    // The others first: they are busy when the push arrives.
    if (busy) await Promise.all(bench.repos.slice(1).map((r) => bench.requestSync(r.name, at)));
    const t = Date.now();
    await bench.requestSync(target.name, at, head);
    // From the benchmark's watch (no GET every 25 ms beside the syncs being measured).
    for (;;) {
      const hash = bench.watch.functions.get(name)?.spec?.codeHash;
      if (hash && hash !== oldHash) return Date.now() - t;
      if (Date.now() - t > 300_000) throw new Error(`the push to ${name} did not reach its Function within 300 s`);
      await sleep(10);
    }
  };
  const single: number[] = [];
  const busy: number[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    single.push(await pushOne(false));
    await settle();
    const before = await syncTotals(bench.controller);
    // This process sends the push's request and sees its Function change through its watch, beside the
    // harness: its own event-loop delay during the busy push is part of what the push's time measures.
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    busy.push(await pushOne(true));
    loop.disable();
    const after = await syncTotals(bench.controller);
    const syncs =
      before && after
        ? `; ${after.count - before.count} syncs meanwhile (${after.unchanged - before.unchanged} stopped after ls-remote), ${(((after.seconds - before.seconds) / Math.max(1, after.count - before.count)) * 1000).toFixed(0)} ms each`
        : '';
    log(`round ${round + 1}: push → Function updated ${single.at(-1)} ms alone, ${busy.at(-1)} ms among ${bench.repos.length - 1} busy repositories${syncs}; this process's event-loop delay meanwhile max ${(loop.max / 1e6).toFixed(0)} ms, mean ${(loop.mean / 1e6).toFixed(1)} ms; load average ${loadAverage()}`);
    await settle();
  }
  const ratio = median(busy) / median(single);
  log(`push → Function updated, median of ${single.length}: ${median(single)} ms single repository, ${median(busy)} ms among busy repositories: ${ratio.toFixed(2)}x`);
  console.log(
    JSON.stringify({ functions: N, repositories: bench.repos.length, steadyStateSeconds: steady.seconds, rssMb: Math.round(rss.rssMb), pushSingleMs: single, pushBusyMs: busy, ratio, loadAverage: loadAverage() }),
  );
});
