// One writer at a time (issue 11 item 11): two `sless controller` replicas, each talking to the real API
// server through a counting proxy of its own. While the leader is busy (Functions keep arriving, and its
// writes take 1 s each: a slow API server), its Lease renewals are held, as a partition or a stalled
// renewal would. The other replica takes the Lease once it has expired; from the new leader's first
// write on, no write of the old leader may reach the API server. SLESS_TEST_CONTROLLER_LOG=1 shows their logs.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startControllerServer, type ControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import { startCountingProxy, type CountingProxy, type ProxiedRequest } from '../helpers/counting-proxy.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { controllerTestEnv, dropFunctionFinalizers, GROUP, VERSION } from './kube-platform-kit.ts';

const LEASE = { leaseDurationMs: 3_000, renewIntervalMs: 200, renewDeadlineMs: 2_000 };
const isLease = (r: { url: string }) => r.url.includes('/leases');

describe('leader hand-over under load', () => {
  const kc = testKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns: TestNamespace;
  let buildNs: TestNamespace;
  let dir: string;
  const replicas: Array<{ identity: string; server: ControllerServer; proxy: CountingProxy }> = [];
  let loading = true;
  let load: Promise<void> | undefined;

  const start = async (identity: string) => {
    const proxy = await startCountingProxy(kc);
    const file = path.join(dir, `${identity}.kubeconfig`);
    await writeFile(file, proxy.kubeConfig().exportConfig());
    const config = loadControllerConfig(['--port', '0', '--metrics-port', '0', '--kubeconfig', file], controllerTestEnv('handover-secret-0123456789abcdef', buildNs.name));
    const server = await startControllerServer(config, { stdout: process.env.SLESS_TEST_CONTROLLER_LOG === '1' ? process.stderr : new PassThrough().resume(), stderr: new PassThrough().resume() }, {
      host: '127.0.0.1',
      leaderElection: { namespace: ns.name, identity, ...LEASE },
      controller: { watchNamespace: ns.name, backoff: { baseMs: 200, maxMs: 1_000 } },
    });
    replicas.push({ identity, server, proxy });
  };

  before(async () => {
    ns = await freshNamespace(kc, 'handover');
    buildNs = await freshNamespace(kc, 'handover-builds');
    dir = await mkdtemp(path.join(os.tmpdir(), 'sless-handover-'));
    await start('replica-a');
    await start('replica-b');
  });

  after(async () => {
    loading = false;
    await load;
    await Promise.all(replicas.map((r) => r.server.close()));
    await Promise.all(replicas.map((r) => r.proxy.close()));
    await dropFunctionFinalizers(kc, ns.name);
    await ns.cleanup();
    await buildNs.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('the old leader writes nothing once the new leader has written', async () => {
    // Load: Functions keep arriving (each costs the leader a finalizer patch and a status write), and every
    // write takes 1 s (a slow API server), so reconciles are in the middle of writing when a Lease runs out.
    for (const r of replicas) r.proxy.delay(1_000, (q) => q.method !== 'GET' && !isLease(q));
    let n = 0;
    load = (async () => {
      while (loading) {
        await Promise.all(
          Array.from({ length: 4 }, () =>
            custom.createNamespacedCustomObject({
              group: GROUP,
              version: VERSION,
              namespace: ns.name,
              plural: 'functions',
              body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: `load-${n++}` }, spec: { runtime: 'nodejs20' } },
            }),
          ),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const writes = (r: (typeof replicas)[number]) => r.proxy.requests.filter((q) => q.write && !isLease(q) && q.forwardedAt !== undefined).length;
    // The leader at work (on a loaded machine leadership may have moved already: take whoever leads now).
    const leader = await eventually(() => {
      const busy = replicas.find((r) => r.server.controller && writes(r) >= 8);
      assert.ok(busy, `writes so far: ${replicas.map((r) => `${r.identity} ${writes(r)}${r.server.controller ? ' (leads)' : ''}`).join(', ')}`);
      return busy;
    }, { timeoutMs: 60_000 });
    const other = replicas.find((r) => r !== leader)!;

    const blockedAt = Date.now();
    leader.proxy.block(isLease);
    await eventually(() => assert.ok(other.server.controller, 'the other replica leads'), { timeoutMs: 30_000, intervalMs: 50 });
    // The new leader at work: it writes statuses of the Functions still arriving.
    await eventually(() => assert.ok(other.proxy.requests.some((r) => r.write && !isLease(r) && r.forwardedAt !== undefined)), { timeoutMs: 30_000 });
    // The old leader's reconciles had up to 30 s to finish: give its late writes time to show.
    await new Promise((r) => setTimeout(r, 5_000));
    loading = false;
    await load;

    const firstNewWrite = Math.min(...other.proxy.requests.filter((r) => r.write && r.forwardedAt !== undefined && r.at >= blockedAt).map((r) => r.forwardedAt!));
    const late = leader.proxy.requests.filter((r: ProxiedRequest) => r.write && r.forwardedAt !== undefined && r.forwardedAt >= firstNewWrite);
    assert.deepEqual(
      late.map((r) => `${r.method} ${r.url} +${r.forwardedAt! - firstNewWrite} ms`),
      [],
      `the old leader wrote after the new leader's first write (${new Date(firstNewWrite).toISOString()})`,
    );
  });
});
