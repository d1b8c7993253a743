// Push-to-serve benchmark on the real node (not part of any test run; root, `.ci/install.d/25-node.sh`
// and the test images of test/images/build.sh):
//   npx node --import tsx test/bench/push-to-serve.bench.ts [--runs 5] [--only node|python] [--timeline] [--routing both|pods|service]
// A real `sless controller` (the e2e kit's host process), the real git server, SeaweedFS, kaniko
// and the node. Each run changes a function's code, pushes, sends the signed webhook, and polls
// /fn every 100 ms until the new code answers. Reported per case, median of the runs:
//   sync     push → the repository's Synced event (fetch, plan, context upload, Function specs)
//   upload   the build context's PUT to S3 (inside sync), timed by a proxy in front of SeaweedFS
//   kaniko   BuildStarted → BuildSucceeded (Job, pod start, context fetch, kaniko, push by digest)
//   rollout  BuildSucceeded → the first /fn answer from the new code (Deployment rollout, probes)
// --timeline prints each run's moments (build pod, its steps, kaniko's phases, the new function pod).
// total and rollout are the first routing's to serve.
// --routing both (default): two controller replicas share the run, one with SLESS_ROUTE_TO_PODS=false
// (/fn calls the Service) and one with true (/fn calls pods directly, docs/pod-routing.md); the same
// push, build and rollout are polled through both, so "service" and "pods" are before/after in one run.
// Cases: (a) a Node.js function without dependencies; (b) a Python function with a requirements.txt,
// code-only change (the code appended onto its dependencies image: no kaniko build, docs/builds.md).
// Starts the node, git and s3 services unless SLESS_TEST_* variables point at running ones.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { TestService } from '../run.ts';
import { formatTimeline, runTimeline } from './push-to-serve-timeline.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, only: { type: 'string' }, timeline: { type: 'boolean', default: false }, routing: { type: 'string', default: 'both' } },
});
const RUNS = Number(values.runs);
const stops: Array<() => Promise<void>> = [];
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function service(modulePath: string, wanted: string): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const t0 = Date.now();
  const started = await s.start();
  stops.unshift(started.stop);
  Object.assign(process.env, started.env);
  log(`${s.name} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

interface Put {
  readonly path: string;
  readonly start: number;
  readonly end: number;
}

/** A pass-through HTTP proxy in front of S3 that times PUT/POST requests (the context uploads).
 * Headers go through untouched (SigV4 signs the Host the client used, which is this proxy). */
async function timingProxy(target: string, host: string): Promise<{ url: string; puts: Put[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const puts: Put[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const start = Date.now();
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.once('end', () => {
          if (req.method === 'PUT' || req.method === 'POST') puts.push({ path: req.url ?? '', start, end: Date.now() });
        });
      },
    );
    out.once('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    puts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface LogLine {
  readonly time: number;
  readonly msg: string;
}

function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return undefined;
      }
    })
    .filter((l): l is LogLine => l !== undefined && typeof l.msg === 'string');
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

const startLoad = os.loadavg().map((l) => l.toFixed(1)).join(' ');

async function main(): Promise<void> {
  await service('../services/node.ts', 'SLESS_TEST_NODE');
  await service('../services/git.ts', 'SLESS_TEST_GIT_URL');
  await service('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT');
  const { setupNodeKit } = await import('../e2e-node/sless-kit.ts');
  const { requireNode, startWheelIndex } = await import('../e2e-node/node-kit.ts');
  const { hostAddress } = requireNode();
  const proxy = await timingProxy(process.env.SLESS_TEST_S3_ENDPOINT!, hostAddress);
  stops.unshift(() => proxy.close());
  const wheels = await startWheelIndex();
  stops.unshift(() => wheels.stop());
  const kit = await setupNodeKit('bench-p2s', { s3Endpoint: proxy.url });
  stops.unshift(() => kit.dispose());
  const routings = (values.routing === 'both' ? ['service', 'pods'] : [values.routing]) as Array<'service' | 'pods'>;
  if (routings.some((r) => r !== 'service' && r !== 'pods')) throw new Error(`--routing is both, pods or service, not ${values.routing}`);
  const controllers = new Map<'service' | 'pods', Awaited<ReturnType<typeof kit.startController>>>();
  for (const r of routings) controllers.set(r, await kit.startController(r, { SLESS_ROUTE_TO_PODS: r === 'pods' ? 'true' : 'false' }));

  const cases = [
    {
      id: 'a',
      fn: 'nodefn',
      what: 'Node.js function, no dependencies',
      files: (v: number) => ({
        'functions/nodefn/function.yaml': 'runtime: nodejs20\nentrypoint: handler.handle\n',
        'functions/nodefn/handler.js': `exports.handle = async () => ({ v: ${v} });\n`,
      }),
    },
    {
      id: 'b',
      fn: 'pyfn',
      what: 'Python function with requirements.txt, code-only change',
      files: (v: number) => ({
        'functions/pyfn/function.yaml': 'runtime: python3.11\nentrypoint: handler.handle\n',
        'functions/pyfn/requirements.txt': `--no-index\n--find-links ${wheels.url}\n--trusted-host ${hostAddress}\nhumanize==4.9.0\n`,
        'functions/pyfn/handler.py': `import humanize\n\n\ndef handle(event, context):\n    return {"v": ${v}, "size": humanize.naturalsize(${v})}\n`,
      }),
    },
  ].filter((c) => !values.only || values.only === (c.id === 'a' ? 'node' : 'python'));

  await kit.push(Object.assign({}, ...cases.map((c) => c.files(0))) as Record<string, string>, 'initial');
  await kit.createRepository('fns');
  for (const c of cases) {
    const t0 = Date.now();
    await kit.waitFunction(c.fn, (f) => f.status?.phase === 'Ready', 600_000);
    log(`${c.fn}: first build and rollout (cold) in ${sec(Date.now() - t0)}`);
  }

  type Result = Record<'total' | 'sync' | 'upload' | 'kaniko' | 'rollout', number> & { byRouting: Partial<Record<'service' | 'pods', number>> };
  const results: Record<string, Result[]> = {};
  for (const c of cases) {
    results[c.id] = [];
    for (let run = 1; run <= RUNS; run++) {
      const version = run;
      const from = new Map([...controllers].map(([r, c]) => [r, c.output().length]));
      const putsFrom = proxy.puts.length;
      const t0 = Date.now();
      await kit.push(c.files(version), `${c.fn} v${version}`);
      const hook = await kit.webhook('fns');
      if (hook.status !== 202) throw new Error(`webhook answered ${hook.status}`);
      // Each routing polled on its own replica, every 100 ms, until it serves the new version.
      const servedBy = Object.fromEntries(
        await Promise.all(
          [...controllers].map(async ([routing, replica]) => {
            const deadline = Date.now() + 600_000;
            while (Date.now() < deadline) {
              try {
                const res = await fetch(`${replica.url}/fn/${kit.ns}/${c.fn}`, { signal: AbortSignal.timeout(30_000) });
                const body = (await res.json()) as { v?: number };
                if (body.v === version) return [routing, Date.now()] as const;
              } catch {
                // not yet
              }
              await new Promise((r) => setTimeout(r, 100));
            }
            throw new Error(`${c.fn} v${version} was not served through the ${routing} replica within 600 s`);
          }),
        ),
      ) as Partial<Record<'service' | 'pods', number>>;
      const served = Math.min(...Object.values(servedBy));
      await new Promise((r) => setTimeout(r, 300));
      const lines = logLines([...controllers].map(([r, ctl]) => ctl.output().slice(from.get(r))).join('\n')).sort((a, b) => a.time - b.time);
      const at = (re: RegExp): number => lines.find((l) => re.test(l.msg))?.time ?? NaN;
      const synced = at(new RegExp(`^Synced: FunctionRepository ${kit.ns}/fns`));
      const started = at(new RegExp(`^BuildStarted: Function ${kit.ns}/${c.fn}`));
      const built = at(new RegExp(`^BuildSucceeded: Function ${kit.ns}/${c.fn}`));
      const puts = proxy.puts.slice(putsFrom);
      const upload = puts.length ? Math.max(...puts.map((p) => p.end)) - Math.min(...puts.map((p) => p.start)) : NaN;
      const byRouting = Object.fromEntries(Object.entries(servedBy).map(([k, v]) => [k, v - t0])) as Partial<Record<'service' | 'pods', number>>;
      const r: Result = { total: served - t0, sync: synced - t0, upload, kaniko: built - started, rollout: served - built, byRouting };
      results[c.id]!.push(r);
      if (values.timeline) {
        const marks = await runTimeline(
          kit.kc,
          { namespace: kit.buildNs, selector: `sless.kube5s.ru/function-namespace=${kit.ns},sless.kube5s.ru/function=${c.fn}` },
          { namespace: kit.ns, selector: `sless.kube5s.ru/function=${c.fn},sless.kube5s.ru/component=function` },
          t0,
        );
        const own = (what: string, at: number): { what: string; at: number } => ({ what, at: (at - t0) / 1000 });
        const all = [...marks, own('Synced', synced), own('BuildStarted', started), own('BuildSucceeded', built), ...Object.entries(servedBy).map(([k, v]) => own(`served (${k})`, v))];
        console.log(formatTimeline(all.filter((m) => Number.isFinite(m.at)).sort((a, b) => a.at - b.at)));
      }
      const via = Object.entries(byRouting).map(([k, v]) => `${k} ${sec(v)}`).join(', ');
      log(`(${c.id}) run ${run}: total ${sec(r.total)} = sync ${sec(r.sync)} (upload ${sec(r.upload)}) + build start ${sec(started - synced)} + kaniko ${sec(r.kaniko)} + rollout ${sec(r.rollout)}; served through ${via}`);
    }
  }

  const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`\npush → served on the real node, median of ${RUNS} runs (load average ${load}; at the start ${startLoad})`);
  console.log(`| case | total | sync | (upload) | kaniko | rollout | ${routings.map((r) => `total (rollout) via ${r}`).join(' | ')} | goal |`);
  console.log(`| --- | --- | --- | --- | --- | --- | ${routings.map(() => '---').join(' | ')} | --- |`);
  for (const c of cases) {
    const rs = results[c.id]!;
    const m = (k: 'total' | 'sync' | 'upload' | 'kaniko' | 'rollout'): string => sec(median(rs.map((r) => r[k])));
    // The build ended at total - rollout after the push: what each routing took from there is its rollout.
    const via = routings
      .map((k) => `${sec(median(rs.map((r) => r.byRouting[k] ?? NaN)))} (${sec(median(rs.map((r) => (r.byRouting[k] ?? NaN) - (r.total - r.rollout))))})`)
      .join(' | ');
    console.log(`| (${c.id}) ${c.what} | **${m('total')}** | ${m('sync')} | ${m('upload')} | ${m('kaniko')} | ${m('rollout')} | ${via} | < ${c.id === 'a' ? 5 : 10} s |`);
  }
}

try {
  await main();
} finally {
  for (const stop of stops) await stop().catch((e: unknown) => console.error('stop failed:', e));
}
