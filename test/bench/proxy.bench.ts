// The /fn proxy benchmark (not part of npm test). Run: node --import tsx test/bench/proxy.bench.ts
//   [--seconds 10] [--rounds 3] [--pg] [--picker]   (--pg: invocations go to a real PostgreSQL;
//   --picker: sless picks a pod per call as on Kubernetes with SLESS_ROUTE_TO_PODS, docs/pod-routing.md)
// Three processes share the machine: the upstream (a plain node:http "function"), sless (the real
// app: /fn with invocation logging, metrics, an info-level logger and the autoscaler's in-flight count
// on), and a bare ~20-line node:http + undici proxy. Every figure is measured in the same run, interleaved in rounds:
//  (a) latency at a fixed 1,000 req/s over 64 keep-alive connections (open loop, generated here
//      with an undici Pool): p50/p99 direct, through sless, through the bare proxy;
//  (b) saturated throughput with wrk (64 connections, 1 thread): sless /fn vs the bare proxy.
// Medians over the rounds are reported, plus the CPU time each proxy process spent per request
// during (b) (from /proc; steadier than req/s when other work shares the machine).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { freshDatabase, startPostgres } from '../services/postgres.ts';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' }, pg: { type: 'boolean', default: false }, picker: { type: 'boolean', default: false } },
});
// Read by the sless child (test/helpers/proxy-child.ts), which inherits this environment.
if (args.picker) process.env.SLESS_BENCH_PICKER = '1';
const seconds = Number(args.seconds);
const rounds = Number(args.rounds);
const children: ChildProcess[] = [];

async function start(script: string, argv: string[]): Promise<{ port: number; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  return { port: (JSON.parse(String(first.value)) as { port: number }).port, pid: child.pid ?? 0 };
}

/** CPU time (user + system) a process has used so far, in ms (Linux, 100 ticks a second). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Open loop: 1,000 requests a second whatever the latency, over 64 keep-alive connections. */
async function fixedRate(url: string, rate: number, durationS: number): Promise<{ p50: number; p99: number; errors: number; count: number }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let errors = 0;
  const inflight: Promise<void>[] = [];
  const t0 = performance.now();
  let sent = 0;
  const total = rate * durationS;
  while (sent < total) {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate);
    for (; sent < Math.min(due, total); sent++) {
      const start = performance.now();
      inflight.push(
        pool
          .request({ path: target.pathname, method: 'GET' })
          .then(async (res) => {
            await res.body.dump();
            if (res.statusCode !== 200) errors++;
            latencies.push(performance.now() - start);
          })
          .catch(() => void errors++),
      );
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, count: latencies.length };
}

async function wrk(url: string, durationS: number, pid?: number): Promise<{ rps: number; errors: number; cpuUsPerRequest: number }> {
  const cpu0 = pid ? await cpuMs(pid) : 0;
  const { stdout } = await promisify(execFile)('wrk', ['-t1', '-c64', `-d${durationS}s`, '--latency', url]);
  const cpuUsed = pid ? (await cpuMs(pid)) - cpu0 : NaN;
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errs = socketErrors ? socketErrors.slice(1).reduce((n, v) => n + Number(v), 0) : 0;
  return { rps, errors: non2xx + errs, cpuUsPerRequest: (cpuUsed * 1000) / requests };
}

async function main(): Promise<void> {
  await promisify(execFile)('wrk', ['--version']).catch((err: { stdout?: string; code?: string }) => {
    if (err.code === 'ENOENT') throw new Error('wrk is not installed: apt-get install wrk');
  });
  const pg = args.pg ? await startPostgres() : undefined;
  try {
    const upstream = `http://127.0.0.1:${(await start('test/bench/bench-upstream.ts', [])).port}`;
    const dbUrl = pg ? await freshDatabase(pg.url) : '';
    const sless = await start('test/helpers/proxy-child.ts', [upstream, '', dbUrl]);
    const bare = await start('test/bench/bare-proxy.ts', [upstream]);
    const targets = {
      direct: `${upstream}/hello`,
      sless: `http://127.0.0.1:${sless.port}/fn/dev/fn/hello`,
      bare: `http://127.0.0.1:${bare.port}/hello`,
    };
    const pids = { sless: sless.pid, bare: bare.pid };
    console.log(`# warm-up (${pg ? 'invocations to PostgreSQL' : 'invocations to the in-memory log'}; metrics and info logging on)`);
    for (const url of Object.values(targets)) await wrk(url, 3);
    console.log(`load average before: ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);

    const lat: Record<string, { p50: number[]; p99: number[]; errors: number }> = {};
    const thr: Record<'sless' | 'bare', number[]> = { sless: [], bare: [] };
    const cpu: Record<'sless' | 'bare', number[]> = { sless: [], bare: [] };
    let wrkErrors = 0;
    for (let r = 1; r <= rounds; r++) {
      for (const [name, url] of Object.entries(targets)) {
        const res = await fixedRate(url, 1000, seconds);
        const row = (lat[name] ??= { p50: [], p99: [], errors: 0 });
        row.p50.push(res.p50);
        row.p99.push(res.p99);
        row.errors += res.errors;
        console.log(`round ${r} 1000 req/s ${name.padEnd(6)} p50 ${res.p50.toFixed(3)} ms  p99 ${res.p99.toFixed(3)} ms  errors ${res.errors}  n=${res.count}`);
      }
      for (const name of ['sless', 'bare'] as const) {
        const res = await wrk(targets[name], seconds, pids[name]);
        thr[name].push(res.rps);
        cpu[name].push(res.cpuUsPerRequest);
        wrkErrors += res.errors;
        console.log(`round ${r} saturated  ${name.padEnd(6)} ${res.rps.toFixed(0)} req/s  errors ${res.errors}  cpu ${res.cpuUsPerRequest.toFixed(1)} us/request`);
      }
    }
    const m = (name: string, k: 'p50' | 'p99') => median(lat[name]?.[k] ?? []);
    console.log('\n# medians over rounds');
    for (const name of Object.keys(targets)) {
      console.log(`${name.padEnd(6)} p50 ${m(name, 'p50').toFixed(3)} ms  p99 ${m(name, 'p99').toFixed(3)} ms  errors ${lat[name]?.errors}`);
    }
    console.log(`added by sless: p50 ${(m('sless', 'p50') - m('direct', 'p50')).toFixed(3)} ms, p99 ${(m('sless', 'p99') - m('direct', 'p99')).toFixed(3)} ms (goal <= 1 / <= 2)`);
    console.log(`added by bare:  p50 ${(m('bare', 'p50') - m('direct', 'p50')).toFixed(3)} ms, p99 ${(m('bare', 'p99') - m('direct', 'p99')).toFixed(3)} ms`);
    const ratios = thr.sless.map((s, i) => s / (thr.bare[i] ?? NaN));
    console.log(
      `saturated: sless ${median(thr.sless).toFixed(0)} req/s, bare ${median(thr.bare).toFixed(0)} req/s, ` +
        `ratio ${(median(ratios) * 100).toFixed(1)}% (median of per-round ratios; goal >= 85%), wrk errors ${wrkErrors}`,
    );
    console.log(
      `cpu per request: sless ${median(cpu.sless).toFixed(1)} us, bare ${median(cpu.bare).toFixed(1)} us ` +
        `(bare/sless ${((median(cpu.bare) / median(cpu.sless)) * 100).toFixed(1)}%: the throughput ratio on a machine with nothing else running)`,
    );
    console.log(`load average at the end: ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
  } finally {
    for (const c of children) c.kill();
    await pg?.destroy();
  }
}

await main();
