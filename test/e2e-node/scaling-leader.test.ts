// Issue 29's Show, "killing the leader while it scales out loses no request", on the real node: two real
// controllers that see each other's calls in flight (SLESS_TEST_PEERS_DIR: the leader asks the other
// replica's metrics listener, as it asks the pods of the metrics Service in a cluster), a function with
// `concurrency: 2, max: 3` under a steady load sent to the replica that survives. The load needs 2 replicas
// first; once the leader has written the scale-out, and before the new pod serves, the leader is killed
// (SIGKILL, a crashed pod) and the load rises to need 3: the other replica takes the Lease and finishes the
// scale-out from the Deployment's count. Every call gets 200, the replica count never goes down while the
// load lasts (one scale write per step up, none back), and after the load the function returns to min.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { setupNodeKit, type ControllerProcess, type NodeKit } from './sless-kit.ts';

const SLEEPY = `exports.handle = async (e) => { await new Promise((r) => setTimeout(r, Number(e?.ms ?? 0))); return { pid: process.pid }; };\n`;
const CALL_MS = 500;

interface Seen {
  readonly atMs: number;
  readonly generation: number;
  readonly replicas: number;
  readonly available: number;
}

describe('killing the leader while a function scales out', { timeout: 900_000 }, () => {
  let kit: NodeKit;
  let apps: AppsV1Api;
  let peersDir: string;

  const leader = async (): Promise<ControllerProcess> => {
    const lease = await kit.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: kit.ns, name: 'sless-controller' });
    const holder = lease.spec?.holderIdentity ?? '';
    const c = kit.controllers.find((p) => p.name === holder && p.process.exitCode === null && p.process.signalCode === null);
    assert.ok(c, `the Lease holder ${holder} is one of the test's running controllers`);
    return c;
  };
  const look = async (): Promise<Seen> => {
    const d = await apps.readNamespacedDeployment({ namespace: kit.ns, name: 'surge' });
    return { atMs: Date.now(), generation: d.metadata?.generation ?? 0, replicas: d.spec?.replicas ?? 0, available: d.status?.availableReplicas ?? 0 };
  };

  before(async () => {
    peersDir = await mkdtemp(path.join(os.tmpdir(), 'sless-e2e-peers-'));
    kit = await setupNodeKit('e2e-scale-lead', { env: { SLESS_TEST_PEERS_DIR: peersDir } });
    apps = kit.kc.makeApiClient(AppsV1Api);
    await kit.startController('c1');
    await kit.push({
      'functions/surge/function.yaml': 'name: surge\nruntime: nodejs20\nentrypoint: handler.handle\nscale: {min: 1, max: 3, concurrency: 2, idle: 10s}\n',
      'functions/surge/handler.js': SLEEPY,
    });
    await kit.createRepository('fns');
    await kit.waitFunction('surge', (f) => f.status?.phase === 'Ready', 600_000);
    await kit.startController('c2');
  });
  after(async () => {
    await kit?.dispose();
    if (peersDir) await rm(peersDir, { recursive: true, force: true });
  });

  it('every call gets 200, the new leader finishes the scale-out without a step back, then min again', async () => {
    await eventually(async () => assert.equal((await look()).replicas, 1, 'at min before the load'), { timeoutMs: 120_000, intervalMs: 1000 });
    const lead = await leader();
    const survivor = kit.controllers.find((p) => p !== lead)!;
    assert.ok(survivor, 'a second replica runs');
    const start = await look();

    const failures: string[] = [];
    let calls = 0;
    let callers = 4; // 4 in flight against concurrency 2: 2 replicas
    let stop = false;
    const caller = async (i: number): Promise<void> => {
      while (!stop) {
        if (i >= callers) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        calls++;
        try {
          const r = await fetch(`${survivor.url}/fn/${kit.ns}/surge`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ms: CALL_MS }),
            signal: AbortSignal.timeout(30_000),
          });
          const text = await r.text();
          if (r.status !== 200) failures.push(`${r.status} ${text.slice(0, 200)}`);
        } catch (err) {
          failures.push(String(err));
        }
      }
    };
    const seen: Seen[] = [start];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        // A slow or failed read is a gap in the record, not a failure of the function.
        seen.push(await look().catch(() => seen.at(-1)!));
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const load = Promise.all(Array.from({ length: 6 }, (_, i) => caller(i)));

    // The leader writes the scale-out; the new pod is not serving yet when it dies.
    const loadStart = Date.now();
    const wrote = await eventually(
      () => {
        const last = seen.at(-1)!;
        assert.ok(last.replicas >= 2, `scale-out written (replicas ${last.replicas})`);
        return last;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const killAt = Date.now();
    await lead.kill();
    callers = 6; // now 3 replicas' worth
    process.stderr.write(`scale-out written ${wrote.atMs - loadStart} ms into the load (replicas ${wrote.replicas}, available ${wrote.available}); leader ${lead.name} killed\n`);
    assert.ok(wrote.available < wrote.replicas, 'the leader died while the scale-out was under way (a new pod not yet available)');

    // The load goes on a minute after the kill: the new leader must serve it and finish the scale-out.
    await new Promise((r) => setTimeout(r, 60_000));
    stop = true;
    await load;
    const loadEnd = Date.now();
    watching = false;
    await watcher;

    const during = seen.filter((s) => s.atMs <= loadEnd);
    const steps = during.map((s) => s.replicas).filter((n, i, all) => i === 0 || n !== all[i - 1]);
    const writes = during.at(-1)!.generation - start.generation;
    const newLeader = await leader();
    const firstThree = during.find((s) => s.available >= 3);
    process.stderr.write(
      `${calls} calls, ${failures.length} failed; replicas over the load ${steps.join(' → ')}; ${writes} Deployment writes; ` +
        `new leader ${newLeader.name}; 3 available ${firstThree ? `${firstThree.atMs - killAt} ms after the kill` : 'never'}\n`,
    );
    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed`);
    assert.equal(newLeader, survivor, 'the surviving replica leads');
    assert.deepEqual(steps, [1, 2, 3], 'up one step per load level, never down while the load lasts');
    assert.equal(writes, 2, 'one scale write per step (1 → 2 by the old leader, 2 → 3 by the new one)');
    assert.ok(firstThree, 'three replicas served under the load');
    assert.match(survivor.output(), /surge scaled up to 3 replicas/, 'the new leader wrote the last step');

    await eventually(async () => assert.equal((await look()).replicas, 1), { timeoutMs: 180_000, intervalMs: 1000 });
  });
});
