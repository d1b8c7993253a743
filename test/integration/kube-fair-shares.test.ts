// Issue 11 item 5 against the real API server, git server and SeaweedFS: the per-namespace cap on
// Functions (a repository's sync and /v1 createFunction), and one abusive tenant flooding /v1, /hooks and
// git pushes while another tenant's push-to-serve time is measured, with and without the abuser.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { PlatformError } from '../../src/platform/types.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { hs256Token, SECRET } from '../helpers/http-test-kit.ts';
import { eventually, markJobSucceeded } from '../helpers/kube.ts';
import { apps, conditionOf, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';
import { platformSettings, setupPlatformKit, testS3Store, type PlatformKit } from './kube-platform-kit.ts';

const WEBHOOK_SECRET = 'fair-shares-webhook-secret';

describe('per-namespace cap on Functions', () => {
  let kit: Kit;
  let pkit: PlatformKit;
  before(async () => {
    kit = await setupKit('kube-ns-cap', undefined, { limits: { functionsPerNamespace: 2 } });
    await kit.clone.write({ ...nodeFunction('one'), ...nodeFunction('two'), ...nodeFunction('three') });
    await kit.clone.commitAndPush('three functions');
    await kit.startController();
    pkit = await setupPlatformKit('v1-ns-cap', { settings: { ...platformSettings(testS3Store()), limits: { functionsPerNamespace: 2 } } });
  });
  after(async () => {
    await kit?.dispose();
    await pkit?.dispose();
  });

  it('stalls a sync that would take the namespace past the cap: NamespaceQuotaExceeded, nothing applied', async () => {
    await kit.createRepository('big');
    const repo = await eventually(async () => {
      const r = await kit.getRepository('big');
      assert.equal(conditionOf(r, 'Stalled')?.reason, 'NamespaceQuotaExceeded', JSON.stringify(r.status?.conditions));
      return r;
    });
    assert.match(conditionOf(repo, 'Stalled')?.message ?? '', /2/);
    assert.equal((await kit.listFunctions()).length, 0);
  });

  it('refuses a /v1 createFunction past the cap (quota_exceeded, 403)', async () => {
    await pkit.platform.createFunction(pkit.ns, { name: 'a', runtime: 'nodejs20' });
    await pkit.platform.createFunction(pkit.ns, { name: 'b', runtime: 'nodejs20' });
    await assert.rejects(
      pkit.platform.createFunction(pkit.ns, { name: 'c', runtime: 'nodejs20' }),
      (err: unknown) => err instanceof PlatformError && err.code === 'quota_exceeded' && /holds 2 functions, the most allowed/.test(err.message),
    );
  });
});

/** A signed GitHub-style push delivery for `after`. */
function delivery(after: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after, commits: [] });
  const sig = createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': after, 'x-hub-signature-256': `sha256=${sig}` } };
}

describe('one abusive tenant, and another tenant’s push-to-serve time', () => {
  let kit: Kit;
  let app: FastifyInstance;
  let base = '';
  let abuserClone: WorkClone;
  before(async () => {
    kit = await setupKit('kube-abuse');
    const core = kit.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'hooks' }, type: 'sless.kube5s.ru/git-credentials', stringData: { webhookSecret: WEBHOOK_SECRET } },
    });
    const abuserRepo = await createRepo(sharedGitServer(), 'kube-abuse-abuser');
    abuserClone = await WorkClone.create(abuserRepo);
    await abuserClone.write({ ...nodeFunction('noise') });
    await abuserClone.commitAndPush('noise');
    await kit.clone.write({ ...nodeFunction('victim') });
    await kit.clone.commitAndPush('victim');
    // The shared HTTP surface of `sless controller`, with its rate limits (small, so the flood reaches them).
    app = await buildApp({
      platform: new KubernetesPlatform({ kubeConfig: kit.kc, store: testS3Store(), settings: platformSettings(testS3Store()) }),
      invocationLog: createMemoryInvocationLog(),
      buildLog: createMemoryBuildLog(),
      auth: { key: { kind: 'hs256', secret: SECRET } },
      registry: new Registry(),
      logger: false,
      rateLimits: { v1PerMinute: 120, hooksPerMinute: 30 },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await kit.startController();
    await kit.createRepository('victim', { secretRef: { name: 'hooks' }, interval: '10m' });
    await kit.createRepository('abuser', { url: abuserRepo.url, secretRef: { name: 'hooks' }, interval: '10m' });
    await serveFirstBuild(kit, 'victim');
  });
  after(async () => {
    await app?.close();
    await kit?.dispose();
  });

  /** Push a code change to the victim, deliver its webhook, play its build and rollout: ms until Ready on the new image. */
  async function pushToServe(round: number): Promise<number> {
    const started = Date.now();
    await kit.clone.write(nodeFunction('victim', { body: `exports.handle = async () => ({ round: ${round} });\n` }));
    const sha = await kit.clone.commitAndPush(`victim round ${round}`);
    const { body, headers } = delivery(sha);
    const res = await fetch(`${base}/hooks/${kit.ns}/victim`, { method: 'POST', headers, body });
    assert.equal(res.status, 202, await res.text());
    const before = (await kit.getFunction('victim'))?.status?.imageRef;
    const job = await eventually(
      async () => {
        const jobs = (await kit.buildJobs('victim')).filter((j) => !j.status?.succeeded);
        assert.ok(jobs[0], 'a new build Job for victim');
        return jobs[0];
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const digest = `sha256:${round.toString(16).padStart(64, 'c')}`;
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: digest });
    // Play the rollout of the new image, not the finished one of the old: wait until the Deployment has it.
    await eventually(
      async () => {
        const d = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'victim' });
        assert.ok(d.spec?.template.spec?.containers[0]?.image?.endsWith(digest), 'the Deployment runs the new image');
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    await kit.serve('victim');
    await eventually(
      async () => {
        const fn = await kit.getFunction('victim');
        assert.notEqual(fn?.status?.imageRef, before);
        assert.equal(fn?.status?.phase, 'Ready', JSON.stringify(fn?.status));
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    return Date.now() - started;
  }

  it('serves the victim while the abuser floods /v1, /hooks and git, and measures its push-to-serve time with and without', async (t) => {
    const quiet = [await pushToServe(1), await pushToServe(2)];

    // The abuser: its own /v1 token flooding its namespace, signed deliveries flooding /hooks for its
    // repository, and a push to its repository every 300 ms.
    const token = await hs256Token({}, { sub: 'abuser@example.com' });
    const abuserNs = namespaceForSubject('abuser@example.com');
    let stop = false;
    const counts = { v1: 0, v1Limited: 0, hooks: 0, hooksLimited: 0, pushes: 0 };
    const flood = async (send: () => Promise<Response>, ok: 'v1' | 'hooks', limited: 'v1Limited' | 'hooksLimited') => {
      while (!stop) {
        const res = await send().catch(() => undefined);
        await res?.arrayBuffer().catch(() => undefined);
        if (res?.status === 429) counts[limited]++;
        else counts[ok]++;
      }
    };
    let lastSha = '1'.repeat(40);
    const workers = [
      ...Array.from({ length: 4 }, () => flood(() => fetch(`${base}/v1/namespaces/${abuserNs}/functions`, { headers: { authorization: `Bearer ${token}` } }), 'v1', 'v1Limited')),
      ...Array.from({ length: 4 }, () =>
        flood(() => {
          const { body, headers } = delivery(lastSha);
          return fetch(`${base}/hooks/${kit.ns}/abuser`, { method: 'POST', headers, body });
        }, 'hooks', 'hooksLimited'),
      ),
      (async () => {
        for (let i = 0; !stop; i++) {
          await abuserClone.write({ 'functions/noise/handler.js': `exports.handle = async () => ${i};\n` });
          lastSha = await abuserClone.commitAndPush(`noise ${i}`);
          counts.pushes++;
          await new Promise((r) => setTimeout(r, 300));
        }
      })(),
    ];
    let loud: number[];
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      loud = [await pushToServe(3), await pushToServe(4)];
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    t.diagnostic(`push-to-serve without the abuser: ${quiet.join(', ')} ms; with it: ${loud.join(', ')} ms; abuser sent ${JSON.stringify(counts)}`);
    assert.ok(counts.v1Limited > 0 && counts.hooksLimited > 0, `the abuser reached its limits: ${JSON.stringify(counts)}`);
    // The victim is still served while the abuser floods (each round above waited for Ready on the new image).
    // NOT asserted: "within 2x". On this 2-core machine shared with seven other sessions the victim took
    // 1.6-4.6x as long with the abuser (the abuser's own accepted syncs and builds, and the flood's CPU in
    // this one process); the figures are in the diagnostic line. Issue 11 item 5 stays open on that point.
    t.diagnostic(`ratio of medians with/without the abuser: ${(median(loud) / median(quiet)).toFixed(2)}`);
  });
});

/** The victim's first build and rollout, before anything is measured. */
async function serveFirstBuild(kit: Kit, name: string): Promise<void> {
  const job = await eventually(
    async () => {
      const [j] = await kit.buildJobs(name);
      assert.ok(j, `a build Job for ${name}`);
      return j;
    },
    { timeoutMs: 60_000 },
  );
  await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: `sha256:${'d'.repeat(64)}` });
  await kit.serve(name);
  await eventually(async () => assert.equal((await kit.getFunction(name))?.status?.phase, 'Ready'), { timeoutMs: 60_000 });
}
