// Scaling on the real node (issue 29): a `min: 0` Node.js function goes to zero after idle and the next
// call wakes it (200, its wait in sless_cold_start_seconds); 50 calls at zero cause one scale-up write and
// all get 200; 3 × concurrency in flight for a minute brings 3 replicas with no failed call and back to
// min after; a disabled function at zero stays there (503); killing the leader while a function wakes
// loses no call. Two real `sless controller` processes on the host (sless-kit.ts): calls go to one of
// them; the leader's autoscaler counts its own calls (the other replica's counts reach it through the
// metrics Service's EndpointSlices only when the controllers run as pods: counts-gatherer.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoordinationV1Api, type V1Deployment } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { setupNodeKit, type ControllerProcess, type NodeKit } from './sless-kit.ts';

const SLEEPY = `exports.handle = async (e) => { await new Promise((r) => setTimeout(r, Number(e?.ms ?? 0))); return { pid: process.pid }; };\n`;
const fnYaml = (name: string, scale: string, extra = ''): string => `name: ${name}\nruntime: nodejs20\nentrypoint: handler.handle\nscale: ${scale}\n${extra}`;
const FILES = (coldExtra = '') => ({
  'functions/cold/function.yaml': fnYaml('cold', '{min: 0, idle: 10s}', coldExtra),
  'functions/cold/handler.js': SLEEPY,
  'functions/wide/function.yaml': fnYaml('wide', '{min: 1, max: 3, concurrency: 2, idle: 10s}'),
  'functions/wide/handler.js': SLEEPY,
  'functions/waker/function.yaml': fnYaml('waker', '{min: 0, idle: 10s}'),
  'functions/waker/handler.js': SLEEPY,
});

describe('scaling on the real node', { timeout: 1_200_000 }, () => {
  let kit: NodeKit;
  let apps: AppsV1Api;
  const deployment = (name: string): Promise<V1Deployment> => apps.readNamespacedDeployment({ namespace: kit.ns, name });
  const call = (c: ControllerProcess, name: string, body: unknown = {}): Promise<Response> =>
    fetch(`${c.url}/fn/${kit.ns}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const atZero = (name: string, timeoutMs = 120_000) =>
    eventually(
      async () => {
        const d = await deployment(name);
        assert.equal(d.spec?.replicas, 0);
        assert.equal(d.status?.replicas ?? 0, 0, 'its pods are gone');
      },
      { timeoutMs, intervalMs: 1000 },
    );
  const metricsOf = async (c: ControllerProcess): Promise<string> => {
    const port = /"metricsPort":(\d+)/.exec(c.output())?.[1];
    assert.ok(port, 'the controller logged its metrics port');
    return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  };
  const leader = async (): Promise<ControllerProcess> => {
    const lease = await kit.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: kit.ns, name: 'sless-controller' });
    const holder = lease.spec?.holderIdentity ?? '';
    // The kit names each controller (POD_NAME), which is its identity in the Lease.
    const c = kit.controllers.find((p) => p.name === holder && p.process.exitCode === null);
    assert.ok(c, `the Lease holder ${holder} is one of the test's controllers`);
    return c;
  };

  before(async () => {
    kit = await setupNodeKit('e2e-scale');
    apps = kit.kc.makeApiClient(AppsV1Api);
    await kit.startController();
    await kit.push(FILES(), 'three functions');
    await kit.createRepository('fns');
    for (const name of ['cold', 'wide', 'waker']) await kit.waitFunction(name, (f) => f.status?.phase === 'Ready', 600_000);
  });
  after(() => kit?.dispose());

  it('goes to zero after idle, stays Ready, and the next call wakes it: 200, its wait in sless_cold_start_seconds', async () => {
    await atZero('cold');
    const fn = await kit.getFunction('cold');
    assert.equal(fn?.status?.phase, 'Ready', 'a function at zero is Ready: it serves on demand');
    await eventually(async () => assert.deepEqual((await kit.getFunction('cold'))?.status?.replicas, { desired: 0, ready: 0 }), { timeoutMs: 30_000 });
    const c = kit.controllers[0]!;
    const started = performance.now();
    const res = await call(c, 'cold');
    const waited = performance.now() - started;
    assert.equal(res.status, 200, await res.clone().text());
    process.stderr.write(`cold start through /fn: ${Math.round(waited)} ms\n`);
    const metrics = await metricsOf(c);
    assert.match(metrics, /sless_cold_start_seconds_count\{[^}]*function="cold"[^}]*\} 1\n/);
    assert.match(metrics, /sless_scale_events_total\{[^}]*function="cold"[^}]*direction="down"[^}]*\} 1\n/);
  });

  it('50 calls at zero all get 200, from one scale-up write', async () => {
    await atZero('cold');
    const before = (await deployment('cold')).metadata?.generation ?? 0;
    const c = kit.controllers[0]!;
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(c, 'cold', { ms: 100 }).then(async (r) => `${r.status} ${r.status === 200 ? '' : await r.text()}`)));
    assert.deepEqual(answers.filter((a) => !a.startsWith('200')), [], 'every call served');
    const d = await deployment('cold');
    assert.equal(d.spec?.replicas, 1);
    assert.equal((d.metadata?.generation ?? 0) - before, 1, 'one change of the Deployment: the scale write 0 → 1');
    const woken = c.output().split('\n').filter((l) => l.includes('cold scaled up to 1 replica: woken by a call')).length;
    assert.equal(woken, 2, 'one wake write per wake (the first test woke it once)');
  });

  it('3 × concurrency in flight for a minute: 3 replicas, no failed call, back to min after', async () => {
    const c = await leader();
    const failures: string[] = [];
    let calls = 0;
    let maxReplicas = 0;
    const until = Date.now() + 60_000;
    // 6 callers, each call 500 ms: 6 in flight against concurrency 2.
    await Promise.all([
      ...Array.from({ length: 6 }, async () => {
        while (Date.now() < until) {
          calls++;
          try {
            const r = await call(c, 'wide', { ms: 500 });
            const text = await r.text();
            if (r.status !== 200) failures.push(`${r.status} ${text.slice(0, 200)}`);
          } catch (err) {
            failures.push(String(err));
          }
        }
      }),
      (async () => {
        while (Date.now() < until) {
          maxReplicas = Math.max(maxReplicas, (await deployment('wide')).status?.availableReplicas ?? 0);
          await new Promise((r) => setTimeout(r, 1000));
        }
      })(),
    ]);
    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed`);
    assert.equal(maxReplicas, 3, 'three replicas served under the load');
    await eventually(async () => assert.equal((await deployment('wide')).spec?.replicas, 1), { timeoutMs: 120_000, intervalMs: 1000 });
  });

  it('killing the leader while a function wakes loses no call', async () => {
    const second = await kit.startController();
    await atZero('waker');
    const lead = await leader();
    const other = kit.controllers.find((p) => p !== lead && p.process.exitCode === null)!;
    assert.ok(other, 'a second replica runs');
    void second;
    const pending = Promise.all(Array.from({ length: 5 }, () => call(other, 'waker', { ms: 50 })));
    await new Promise((r) => setTimeout(r, 200));
    await lead.kill();
    const answers = await pending;
    assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200]);
    // The new leader starts from the Deployment's count: no flap back to zero while calls come.
    for (let i = 0; i < 5; i++) {
      assert.equal((await call(other, 'waker')).status, 200);
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.equal((await deployment('waker')).spec?.replicas, 1);
  });

  it('a disabled function at zero stays at zero under calls (503)', async () => {
    await kit.push({ 'functions/cold/function.yaml': fnYaml('cold', '{min: 0, idle: 10s}', 'http: {enabled: false}\n') }, 'cold off');
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(async () => assert.equal((await deployment('cold')).metadata?.annotations?.['sless.kube5s.ru/http-disabled'], 'true'), { timeoutMs: 120_000, intervalMs: 1000 });
    await atZero('cold');
    const c = kit.controllers.find((p) => p.process.exitCode === null)!;
    for (let i = 0; i < 5; i++) {
      const r = await call(c, 'cold');
      assert.equal(r.status, 503, await r.text());
    }
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await deployment('cold')).spec?.replicas, 0, 'never woken');
  });
});
