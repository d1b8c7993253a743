// Cold start of `sless dev` (issue 29; not part of npm test), under `flock /work/.bench.lock`:
//
//   node --import tsx test/bench/cold-start.bench.ts [wakes=10]
//   node --import tsx test/bench/cold-start.bench.ts --node [--only node|python] [wakes=10]
//     the real node, under `flock /work/.node.lock flock /work/.bench.lock` (cold-start-node.ts)
//
// One Node function with scale {min: 0, idle: 10s}. Each round waits until it has idled down to zero
// processes (not timed), then times one call through /fn from sending to the whole answer. Phases:
//   held -> woken     the activator holds the call while a process starts and answers /health
//                     (sless dev's "woke in N ms" log line)
//   woken -> forwarded  re-resolving the endpoint (cold_start_ms in the invocation log minus the above)
//   forwarded -> answered  the first call into the fresh process and its answer (total - cold_start_ms)
// Goal (issue 29): p50 < 0.3 s on this 2-core machine.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeFiles } from '../helpers/git-server.ts';
import { callFunction, eventually, startDevProcess } from '../e2e/dev-harness.ts';

const { values, positionals } = parseArgs({ options: { node: { type: 'boolean', default: false }, only: { type: 'string' } }, allowPositionals: true });
const wakes = Number(positionals[0] ?? 10);

function pct(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
}
const show = (what: string, ms: number[]) => console.log(`${what.padEnd(24)} p50 ${pct(ms, 0.5).toFixed(0).padStart(5)} ms   p95 ${pct(ms, 0.95).toFixed(0).padStart(5)} ms   (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)})`);

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'sless-cold-start-'));
  await writeFiles(path.join(scratch, 'functions'), {
    'sleepy/function.yaml': 'runtime: nodejs20\nscale:\n  min: 0\n  idle: 10s\n',
    'sleepy/handler.js': 'exports.handle = async () => ({ pid: process.pid });\n',
  });
  const dev = await startDevProcess({ repo: path.join(scratch, 'functions'), path: '' });
  const token = await dev.adminToken();
  const v1 = async (p: string) => (await fetch(`${dev.url}/v1/namespaces/dev/functions/sleepy${p}`, { headers: { authorization: `Bearer ${token}` } })).json();
  const total: number[] = [];
  const woken: number[] = [];
  const resolve: number[] = [];
  const answer: number[] = [];
  try {
    await eventually(async () => ((await callFunction(dev.url, 'sleepy')).status === 200 ? true : undefined), 'sleepy to serve', 120_000);
    for (let i = 0; i < wakes; i++) {
      await eventually(async () => (((await v1('')) as { replicas: { ready: number } }).replicas.ready === 0 ? true : undefined), 'sleepy at zero', 60_000);
      const logFrom = dev.log().length;
      const t0 = performance.now();
      const res = await callFunction(dev.url, 'sleepy');
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`wake ${i + 1}: ${res.status} ${res.body}`);
      const line = await dev.waitForLog(/dev\/sleepy woke in \d+ ms/, { fromOffset: logFrom, timeoutMs: 5000 });
      const wokeMs = Number(/woke in (\d+) ms/.exec(line)?.[1]);
      const [call] = (await v1('/invocations?limit=1')) as Array<{ cold_start_ms?: number }>;
      const coldMs = call?.cold_start_ms ?? NaN;
      total.push(ms);
      woken.push(wokeMs);
      resolve.push(coldMs - wokeMs);
      answer.push(ms - coldMs);
      console.log(`wake ${String(i + 1).padStart(2)}: ${ms.toFixed(0)} ms (woken ${wokeMs}, held ${coldMs.toFixed(0)})`);
    }
  } finally {
    await dev.dispose();
    await rm(scratch, { recursive: true, force: true });
  }
  console.log(`\nsless dev cold start through /fn, ${wakes} wakes of a node function (load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  show('call (total)', total);
  show('held -> woken', woken);
  show('woken -> forwarded', resolve);
  show('forwarded -> answered', answer);
}

if (values.node) {
  if (values.only !== undefined && values.only !== 'node' && values.only !== 'python') throw new Error(`--only is node or python, not ${values.only}`);
  await (await import('./cold-start-node.ts')).coldStartOnNode(wakes, values.only);
} else await main();
