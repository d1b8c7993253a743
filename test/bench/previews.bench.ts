// Pull-request previews on the real node (issue 32, docs/previews.md; not part of any test run):
//   flock /work/.node.lock flock /work/.bench.lock node --import tsx test/bench/previews.bench.ts --node [--runs 5]
// A real `sless controller` (the e2e kit's host process), the real git server, SeaweedFS and the node;
// deliveries signed as GitHub signs them. Three Node.js functions; each run, alternating:
//   main push     push to main changing f1, push delivery   -> /fn/<ns>/f1 answers the new code
//   PR opened     a branch changing f0, pull_request opened  -> /fn/<ns>-pr-<i>/f0 answers it (then closed)
//   push to PR    a push to the long-lived PR 9              -> /fn/<ns>-pr-9/f0 answers the pushed code
// Each time is from the delivery to the first /fn answer with the change (polled every 100 ms); median of the runs.
// Starts the node, git and s3 services unless SLESS_TEST_* variables point at running ones.
import { createHmac, randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { serviceUnlessSet } from './bench-services.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, node: { type: 'boolean', default: false } } });
if (!values.node) throw new Error('previews.bench.ts measures the real node only: pass --node (sless dev: test/bench/dev-previews.bench.ts)');
const RUNS = Number(values.runs);
const LONG_PR = 9;
const stops: Array<() => Promise<void>> = [];
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const startLoad = os.loadavg().map((l) => l.toFixed(1)).join(' ');


const handler = (version: string) => `exports.handle = async () => ({ version: '${version}' });\n`;
const median = (ms: number[]): number => {
  const s = [...ms].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  await serviceUnlessSet('../services/node.ts', 'SLESS_TEST_NODE', stops);
  await serviceUnlessSet('../services/git.ts', 'SLESS_TEST_GIT_URL', stops);
  await serviceUnlessSet('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT', stops);
  const { setupNodeKit, WEBHOOK_SECRET } = await import('../e2e-node/sless-kit.ts');
  const kit = await setupNodeKit('bench-previews');
  stops.unshift(() => kit.dispose());
  // The controller watches the preview namespaces the runs open (its informers are per namespace here).
  const watched = [kit.ns, ...Array.from({ length: RUNS }, (_, i) => `${kit.ns}-pr-${i + 1}`), `${kit.ns}-pr-${LONG_PR}`];
  await kit.startController('c1', { SLESS_TEST_WATCH_NAMESPACE: watched.join(',') });
  const files: Record<string, string> = {};
  for (const f of ['f0', 'f1', 'f2']) Object.assign(files, { [`functions/${f}/function.yaml`]: 'runtime: nodejs20\n', [`functions/${f}/handler.js`]: handler('v0') });
  await kit.push(files, 'three functions');
  await kit.createRepository('fns', { path: 'functions', interval: '10m', previews: { enabled: true, maxOpen: 20 } });

  const deliver = async (event: 'push' | 'pull_request', payload: object): Promise<void> => {
    const body = Buffer.from(JSON.stringify(payload));
    const res = await fetch(`${kit.url()}/hooks/${kit.ns}/fns`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
      },
      body,
    });
    if (res.status !== 202) throw new Error(`${event} delivery answered ${res.status}: ${await res.text()}`);
  };
  const repo = { id: 1, full_name: 'bench/fns' };
  const pullRequest = (action: string, number: number, branch: string, sha: string) =>
    deliver('pull_request', { action, number, pull_request: { number, merged: false, head: { ref: branch, sha, repo }, base: { ref: 'main', repo } }, repository: repo });
  const answers = async (namespace: string, name: string, version: string, t0: number): Promise<number> => {
    for (;;) {
      const r = await fetch(`${kit.url()}/fn/${namespace}/${name}`, { signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
      if (r?.status === 200 && (await r.text()).includes(`"version":"${version}"`)) return performance.now() - t0;
      if (performance.now() - t0 > 300_000) throw new Error(`/fn/${namespace}/${name} did not answer ${version} within 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const pushTo = async (branch: string, change: Record<string, string>, message: string): Promise<string> => {
    await kit.clone.run('checkout', '-q', '-B', branch, branch === 'main' ? 'main' : 'HEAD');
    await kit.clone.write(change);
    const sha = await kit.clone.commit(message);
    await kit.clone.push({ branch });
    return sha;
  };

  await answers(kit.ns, 'f2', 'v0', performance.now());
  log('three functions serve; the long-lived PR opens');
  await kit.clone.run('checkout', '-q', '-b', `pr-${LONG_PR}`, 'main');
  let sha = await pushTo(`pr-${LONG_PR}`, { 'functions/f0/handler.js': handler('long-0') }, 'long PR');
  await pullRequest('opened', LONG_PR, `pr-${LONG_PR}`, sha);
  await answers(`${kit.ns}-pr-${LONG_PR}`, 'f0', 'long-0', performance.now());

  const main: number[] = [];
  const opened: number[] = [];
  const pushed: number[] = [];
  for (let i = 1; i <= RUNS; i++) {
    await kit.clone.run('checkout', '-q', 'main');
    sha = await pushTo('main', { 'functions/f1/handler.js': handler(`main-${i}`) }, `main ${i}`);
    let t0 = performance.now();
    await deliver('push', { ref: 'refs/heads/main', after: sha, commits: [] });
    main.push(await answers(kit.ns, 'f1', `main-${i}`, t0));

    await kit.clone.run('checkout', '-q', '-B', `pr-${i}`, 'main');
    sha = await pushTo(`pr-${i}`, { 'functions/f0/handler.js': handler(`pr-${i}`) }, `pr ${i}`);
    t0 = performance.now();
    await pullRequest('opened', i, `pr-${i}`, sha);
    opened.push(await answers(`${kit.ns}-pr-${i}`, 'f0', `pr-${i}`, t0));
    await pullRequest('closed', i, `pr-${i}`, sha);

    await kit.clone.run('checkout', '-q', `pr-${LONG_PR}`);
    sha = await pushTo(`pr-${LONG_PR}`, { 'functions/f0/handler.js': handler(`long-${i}`) }, `long PR push ${i}`);
    t0 = performance.now();
    await pullRequest('synchronize', LONG_PR, `pr-${LONG_PR}`, sha);
    pushed.push(await answers(`${kit.ns}-pr-${LONG_PR}`, 'f0', `long-${i}`, t0));
    log(`run ${i}: main push ${sec(main.at(-1)!)}, PR opened ${sec(opened.at(-1)!)}, push to PR ${sec(pushed.at(-1)!)}`);
  }
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`\ndelivery → the first /fn answer with the change, real node, median of ${RUNS} (load average ${load}; at the start ${startLoad})`);
  console.log('| what | median | min–max |');
  console.log('| --- | --- | --- |');
  for (const [what, ms] of [['push to main (baseline)', main], ['PR opened → preview served', opened], ['push to a PR → preview updated', pushed]] as const) {
    console.log(`| ${what} | ${sec(median(ms))} | ${sec(Math.min(...ms))}–${sec(Math.max(...ms))} |`);
  }
}

try {
  await main();
} finally {
  for (const stop of stops) await stop().catch((e: unknown) => console.error('stop failed:', e));
}
