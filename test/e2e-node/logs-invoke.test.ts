// `sless logs -f` and `sless invoke` against a real `sless controller` on the real node (issue 33): a
// function with two replicas (scale.min 2) prints a marker per call; `sless logs -f` shows each within
// a second, from both pods, each line prefixed with its pod; `sless invoke` round-trips JSON.
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { UnsecuredJWT } from 'jose';
import { eventually } from '../helpers/kube.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// Each pod also prints a tick with its clock 4 times a second: /fn's kept-alive connection may send
// every call to one pod, the ticks come from both (the node's pods share this machine's clock).
const HANDLER =
  "setInterval(() => console.log(`tick ${process.env.HOSTNAME} at ${Date.now()}`), 250);\n" +
  "exports.handle = async (event) => { console.log(`marker ${event.n} from ${process.env.HOSTNAME}`); return { host: process.env.HOSTNAME, event }; };\n";

describe('sless logs and invoke on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;
  let env: Record<string, string>;

  const sless = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [path.join(root, 'bin/sless.js'), ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  before(async () => {
    kit = await setupNodeKit('e2e-node-logs');
    await kit.startController();
    await kit.push({ 'functions/talker/function.yaml': 'runtime: nodejs20\nentrypoint: handler.handle\nscale:\n  min: 2\n', 'functions/talker/handler.js': HANDLER }, 'talker');
    await kit.createRepository('fns');
    // The controller runs with SLESS_AUTH_INSECURE (sless-kit.ts): an unsigned admin token will do.
    const token = new UnsecuredJWT({ sless_admin: true }).setSubject('e2e').setExpirationTime('1h').encode();
    env = { SLESS_ENDPOINT: kit.url(), SLESS_API_TOKEN: token, SLESS_NAMESPACE: kit.ns, XDG_CONFIG_HOME: '/nonexistent' };
  });
  after(() => kit?.dispose());

  it('serves the function from two pods', async () => {
    await kit.waitFunction('talker', (f) => f.status?.phase === 'Ready', 600_000);
    const apps = kit.kc.makeApiClient(AppsV1Api);
    await eventually(async () => assert.equal((await apps.readNamespacedDeployment({ namespace: kit.ns, name: 'talker' })).status?.readyReplicas, 2), { timeoutMs: 180_000 });
  });

  it('sless invoke round-trips JSON', async () => {
    const r = await sless(['invoke', 'talker', '-d', '{"n": 0, "nested": {"list": [1, "two", null]}}']);
    assert.equal(r.code, 0, r.stderr);
    const answer = JSON.parse(r.stdout) as { host: string; event: unknown };
    assert.deepEqual(answer.event, { n: 0, nested: { list: [1, 'two', null] } });
    assert.match(answer.host, /^talker-/);
  });

  it('sless logs -f shows a line the function prints within a second, from both replicas', async () => {
    const follower = spawn(process.execPath, [path.join(root, 'bin/sless.js'), 'logs', 'talker', '-f', '--tail', '0'], { env: { ...process.env, ...env } });
    let out = '';
    /** Per pod, how long after its tick was printed the line came out of `sless logs -f`. */
    const tickDelays = new Map<string, number[]>();
    follower.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const m of d.matchAll(/^\[(talker-[a-z0-9-]+)\] tick \1 at (\d+)$/gm)) {
        const pod = m[1] as string;
        tickDelays.set(pod, [...(tickDelays.get(pod) ?? []), Date.now() - Number(m[2])]);
      }
    });
    follower.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      const call = async (n: number) => assert.equal((await kit.callFn('talker', { method: 'POST', body: JSON.stringify({ n }), headers: { 'content-type': 'application/json' } })).status, 200);
      await eventually(async () => (await call(1), assert.match(out, /marker 1 from/)), { timeoutMs: 60_000 });
      const latencies: number[] = [];
      const pods = new Set<string>();
      for (let n = 100; n < 120; n++) {
        await call(n);
        const calledAt = Date.now();
        const re = new RegExp(`^\\[(talker-[a-z0-9-]+)\\] marker ${n} from (talker-[a-z0-9-]+)$`, 'm');
        const m = await eventually(() => re.exec(out) ?? assert.fail(`no marker ${n} yet`), { timeoutMs: 5000, intervalMs: 10 });
        latencies.push(Date.now() - calledAt);
        assert.equal(m[1], m[2], 'the prefix names the pod that printed it');
        pods.add(m[1] as string);
      }
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(`logs -f: ${latencies.length} call markers (pods ${[...pods].join(', ')}); after the call returned: median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`);
      assert.ok((sorted.at(-1) ?? 0) < 1000, `every marker within a second: ${latencies.join(', ')} ms`);
      // A few seconds of ticks from each pod (the calls above take well under one).
      await eventually(() => assert.ok([...tickDelays.values()].filter((ms) => ms.length >= 10).length === 2, 'ten ticks from each pod'), { timeoutMs: 20_000 });
      const ticks = [...tickDelays].map(([pod, ms]) => ({ pod, n: ms.length, median: [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)], max: Math.max(...ms) }));
      console.log(`logs -f ticks (printed → shown): ${JSON.stringify(ticks)}`);
      assert.equal(ticks.length, 2, `ticks from both pods: ${JSON.stringify(ticks)}`);
      for (const t of ticks) assert.ok(t.n >= 10 && t.max < 1000, `every tick of ${t.pod} within a second: ${JSON.stringify(t)}`);
    } finally {
      follower.kill();
    }
  });
});
