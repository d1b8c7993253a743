// Rollback benchmark on the real node (not part of any test run; root, `.ci/install.d/25-node.sh` and
// the test images of test/images/build.sh):
//   flock /work/.bench.lock npx node --import tsx test/bench/rollback.bench.ts [--runs 5]
// A real `sless controller` (the e2e kit's host process), the real git server, SeaweedFS and the node.
// Each run: push a new version of a Node.js function and poll /fn every 100 ms until it answers
// (push → serve: sync, build, rollout); then POST .../rollback (the revision before: the previous
// version) and poll until /fn answers the previous version (rollback → serve: no build, only a
// rollout of a kept image); then DELETE .../rollback and poll until the new version answers again
// (undo → serve). Reports the median and range of each, and the load average before and after.
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { TestService } from '../run.ts';
import { runBench, type BenchLifecycle } from './bench-lifecycle.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
/** The services it needs, each unless a SLESS_TEST_* variable points at a running one. */
const SERVICES = [
  ['../services/node.ts', 'SLESS_TEST_NODE'],
  ['../services/git.ts', 'SLESS_TEST_GIT_URL'],
  ['../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT'],
] as const;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const load = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** The kit's controllers accept unsigned tokens (SLESS_AUTH_INSECURE=1). */
const TOKEN = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'bench', sless_admin: true, exp: Math.floor(Date.now() / 1000) + 7200 })}.`;

async function main(life: BenchLifecycle): Promise<void> {
  for (const [modulePath, running] of SERVICES) {
    if (process.env[running]) continue;
    const started = await ((await import(modulePath)) as { service: TestService }).service.start();
    life.onStop(started.stop);
    Object.assign(process.env, started.env);
  }
  const { setupNodeKit } = await import('../e2e-node/sless-kit.ts');
  const kit = await setupNodeKit('bench-rollback');
  life.onStop(() => kit.dispose());
  await kit.startController();
  const files = (v: number) => ({
    'functions/fn/function.yaml': 'runtime: nodejs20\nentrypoint: handler.handle\n',
    'functions/fn/handler.js': `exports.handle = async () => ({ v: ${v} });\n`,
  });
  const answers = async (v: number, from: number): Promise<number> => {
    for (;;) {
      if (Date.now() - from > 300_000) throw new Error(`/fn did not answer v${v} within 300 s`);
      const res = await kit.callFn('fn').catch(() => undefined);
      if (res?.status === 200 && ((await res.json()) as { v: number }).v === v) return Date.now() - from;
      await res?.body?.cancel().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const v1 = (method: string, body?: object) =>
    fetch(`${kit.url()}/v1/namespaces/${kit.ns}/functions/fn/rollback`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  // /fn may serve a new pod (it probes pods itself) before the rollout ends and the controller records
  // the version as live: a rollback asks for the revision before the live one, so wait for the record.
  const recordedLive = async (count: number): Promise<void> => {
    const from = Date.now();
    for (;;) {
      if (Date.now() - from > 120_000) throw new Error(`revision ${count} was not recorded live within 120 s`);
      const res = await fetch(`${kit.url()}/v1/namespaces/${kit.ns}/functions/fn/revisions`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const revs = res.status === 200 ? ((await res.json()) as Array<{ live_until: string | null }>) : [];
      if (revs.length >= count && revs.at(-1)?.live_until === null) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  await kit.push(files(0), 'v0');
  await kit.createRepository('fns');
  await answers(0, Date.now());
  await recordedLive(1);
  const before = load();
  const push: number[] = [];
  const rollback: number[] = [];
  const undo: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const t0 = Date.now();
    await kit.push(files(run), `v${run}`);
    await kit.webhook('fns');
    push.push(await answers(run, t0));
    await recordedLive(run + 1);
    const t1 = Date.now();
    const r = await v1('POST', {});
    if (r.status !== 200) throw new Error(`rollback answered ${r.status}: ${await r.text()}`);
    rollback.push(await answers(run - 1, t1));
    const t2 = Date.now();
    const u = await v1('DELETE');
    if (u.status !== 200) throw new Error(`undo answered ${u.status}: ${await u.text()}`);
    undo.push(await answers(run, t2));
    log(`run ${run}: push → serve ${sec(push.at(-1)!)}, rollback → previous serves ${sec(rollback.at(-1)!)}, undo → head serves ${sec(undo.at(-1)!)} (load ${load()})`);
  }
  const line = (what: string, xs: number[]) => `${what}: median ${sec(median(xs))} (runs ${sec(Math.min(...xs))}–${sec(Math.max(...xs))})`;
  log(line('push → serve', push));
  log(line('rollback → previous revision serves', rollback));
  log(line('undo → head serves', undo));
  log(`load average before ${before}, after ${load()}; builds: ${(await kit.buildJobs('fn')).length} for ${RUNS + 1} versions`);
}

runBench(main);
