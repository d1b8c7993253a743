// Issue 11 item 5 against the real API server, git server and SeaweedFS: the per-namespace cap on
// Functions (a repository's sync and /v1 createFunction), and one abusive tenant flooding /v1, /hooks and
// git pushes while another tenant's push-to-serve time is measured, with and without the abuser.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { buildApp } from '../../src/app/build-app.ts';
import { GROUP, VERSION } from '../../src/platform/kubernetes/crd-types.ts';
import { DEFAULT_BUILDS_PER_NAMESPACE, DEFAULT_SYNC_SHARE, SYNC_WAIT_MAX_MS } from '../../src/platform/kubernetes/settings.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { PlatformError } from '../../src/platform/types.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { hs256Token, SECRET } from '../helpers/http-test-kit.ts';
import { signedPushDelivery } from '../helpers/push-delivery.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import type { Flood } from './fair-shares-flood.ts';
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
    pkit = await setupPlatformKit('v1-ns-cap', { settings: platformSettings(testS3Store(), { limits: { functionsPerNamespace: 2 } }) });
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

const delivery = (after: string) => signedPushDelivery(WEBHOOK_SECRET, after);

/** The abuser: several repositories of several functions each, in its own namespace (another tenant). */
const ABUSER = { repositories: 4, functionsEach: 5 } as const;
/**
 * Victim rounds per condition (about 2 s each): the bound is on the median, so one slow round (a GC, another
 * session's burst) does not decide; 15 rounds with the abuser span more than its syncs' period under the
 * budget (all its repositories at once about every SYNC_WAIT_MAX_MS), so they always meet some of them.
 */
const ROUNDS = 15;
/**
 * The abuser floods this long before the rounds with it: longer than a sync budget's longest wait, so the
 * rounds see it at its steady share, not in the pause that the debt of its first syncs (at setup) causes.
 */
const FLOOD_LEAD_MS = SYNC_WAIT_MAX_MS + 5_000;
/** The victim's sync may wait this long (median) for a slot while the abuser floods: generous, the machine is loaded. */
const QUEUE_WAIT_BOUND_MS = 2_000;

describe('one abusive tenant, and another tenant’s push-to-serve time', () => {
  let kit: Kit;
  let app: FastifyInstance;
  let base = '';
  let abuserNs = '';
  const abuserClones: WorkClone[] = [];
  before(async () => {
    // Production's share of builds and of sync time (the kit lifts them for suites that build or push a lot).
    kit = await setupKit('kube-abuse', undefined, { limits: { buildsPerNamespace: DEFAULT_BUILDS_PER_NAMESPACE, syncShare: DEFAULT_SYNC_SHARE } });
    abuserNs = await kit.addNamespace('kube-abuse-abuser');
    const core = kit.kc.makeApiClient(CoreV1Api);
    for (const namespace of [kit.ns, abuserNs]) {
      await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: 'hooks' }, type: 'sless.kube5s.ru/git-credentials', stringData: { webhookSecret: WEBHOOK_SECRET } },
      });
    }
    for (let r = 0; r < ABUSER.repositories; r++) {
      const clone = await WorkClone.create(await createRepo(sharedGitServer(), `kube-abuse-abuser-${r}`));
      await clone.write(Object.assign({}, ...Array.from({ length: ABUSER.functionsEach }, (_, f) => nodeFunction(`noise-${r}-${f}`))));
      await clone.commitAndPush('noise');
      abuserClones.push(clone);
    }
    await kit.clone.write({ ...nodeFunction('victim') });
    await kit.clone.commitAndPush('victim');
    // The shared HTTP surface of `sless controller`, with its rate limits (small, so the flood reaches them;
    // 40 deliveries a minute per repository: the victim sends 30 in its rounds).
    app = await buildApp({
      platform: new KubernetesPlatform({ kubeConfig: kit.kc, store: testS3Store(), settings: platformSettings(testS3Store()) }),
      invocationLog: createMemoryInvocationLog(),
      buildLog: createMemoryBuildLog(),
      auth: { key: { kind: 'hs256', secret: SECRET } },
      registry: new Registry(),
      logger: false,
      rateLimits: { v1PerMinute: 120, hooksPerMinute: 40 },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await kit.startController();
    await kit.createRepository('victim', { secretRef: { name: 'hooks' }, interval: '10m' });
    const custom = kit.kc.makeApiClient(CustomObjectsApi);
    for (const [r, clone] of abuserClones.entries()) {
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: abuserNs,
        plural: 'functionrepositories',
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: `abuser-${r}` }, spec: { url: clone.repo.url, secretRef: { name: 'hooks' }, interval: '10s' } },
      });
    }
    await serveFirstBuild(kit, 'victim');
  });
  after(async () => {
    await app?.close();
    await kit?.dispose();
    for (const c of abuserClones) await rm(c.dir, { recursive: true, force: true });
  });

  /** Where one round's time went (ms from the push): synced, build Job made, image deployed, Ready. */
  interface Round {
    readonly total: number;
    /** The delivery answered 202 (its sync request written). */
    readonly hook: number;
    /** How long the victim's syncs of this round ran (the sync histogram): the rest of `synced` is waiting. */
    readonly syncRun: number;
    readonly synced: number;
    readonly jobMade: number;
    readonly deployed: number;
  }

  /**
   * Push a code change to the victim, deliver its webhook, play its build and rollout: ms from the pushed
   * commit's delivery until Ready on the new image. The clock starts once the push has landed: the test's
   * git server (the git host, not sless) is loaded by the abuser's pushes too.
   */
  async function pushToServe(round: number): Promise<Round> {
    await kit.clone.write(nodeFunction('victim', { body: `exports.handle = async () => ({ round: ${round} });\n` }));
    const sha = await kit.clone.commitAndPush(`victim round ${round}`);
    const started = Date.now();
    const since = () => Date.now() - started;
    const { body, headers } = delivery(sha);
    const ran = await syncSeconds(kit.ns);
    const res = await fetch(`${base}/hooks/${kit.ns}/victim`, { method: 'POST', headers, body });
    assert.equal(res.status, 202, await res.text());
    const hook = since();
    const before = (await kit.getFunction('victim'))?.status?.imageRef;
    const fast = { timeoutMs: 120_000, intervalMs: 50 };
    await eventually(async () => assert.equal((await kit.getRepository('victim')).status?.revision, sha), fast);
    const synced = since();
    const syncRun = Math.round(((await syncSeconds(kit.ns)).sum - ran.sum) * 1000);
    const job = await eventually(async () => {
      const jobs = (await kit.buildJobs('victim')).filter((j) => !j.status?.succeeded);
      assert.ok(jobs[0], 'a new build Job for victim');
      return jobs[0];
    }, fast);
    const jobMade = since();
    const digest = `sha256:${round.toString(16).padStart(64, 'c')}`;
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: digest });
    // Play the rollout of the new image, not the finished one of the old: wait until the Deployment has it.
    await eventually(async () => {
      const d = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'victim' });
      assert.ok(d.spec?.template.spec?.containers[0]?.image?.endsWith(digest), 'the Deployment runs the new image');
    }, fast);
    const deployed = since();
    await kit.serve('victim');
    await eventually(async () => {
      const fn = await kit.getFunction('victim');
      assert.notEqual(fn?.status?.imageRef, before);
      assert.equal(fn?.status?.phase, 'Ready', JSON.stringify(fn?.status));
    }, fast);
    return { total: since(), hook, syncRun, synced, jobMade, deployed };
  }

  /** Sum (s) and count of the controller's sync durations in one namespace. */
  async function syncSeconds(namespace: string): Promise<{ sum: number; count: number }> {
    const values = (await kit.registry.getSingleMetric('sless_sync_duration_seconds')?.get())?.values ?? [];
    const of = (suffix: string) =>
      values.filter((v) => (v as { metricName?: string }).metricName === `sless_sync_duration_seconds_${suffix}` && v.labels.namespace === namespace).reduce((a, v) => a + v.value, 0);
    return { sum: of('sum'), count: of('count') };
  }

  it('serves the victim while the abuser floods /v1, /hooks and git, and measures its push-to-serve time with and without', async (t) => {
    /** What the controller did while the rounds ran: API requests, the abuser's syncs, this process's event-loop delay. */
    const watch = async (rounds: () => Promise<void>) => {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      const requests = kit.controller!.kube.requests;
      const abuser = await syncSeconds(abuserNs);
      const at = Date.now();
      delay.enable();
      await rounds();
      delay.disable();
      const after = await syncSeconds(abuserNs);
      const s = (Date.now() - at) / 1000;
      return `${((kit.controller!.kube.requests - requests) / s).toFixed(1)} API requests/s; abuser syncs ${after.count - abuser.count} running ${(after.sum - abuser.sum).toFixed(1)} s of ${s.toFixed(0)} s; event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms, max ${(delay.max / 1e6).toFixed(0)} ms`;
    };
    const quiet: Round[] = [];
    const quietLoad = await watch(async () => {
      for (let i = 0; i < ROUNDS; i++) quiet.push(await pushToServe(1 + i));
    });

    // The abuser (fair-shares-flood.ts, its own process like any client): 8 loops with its own /v1 token
    // flooding /v1, 8 loops of signed deliveries flooding /hooks for its repositories, back to back (twice
    // the 4 + 4 loops this test ran in its own process before), and a push every second (to its repositories
    // in turn) changing every function of the repository (a new build per function per push; its builds
    // never finish: long builds).
    const flood = await startFlood({
      base,
      token: await hs256Token({}, { sub: 'abuser@example.com' }),
      v1Path: `/v1/namespaces/${namespaceForSubject('abuser@example.com')}/functions`,
      v1Workers: 8,
      webhookSecret: WEBHOOK_SECRET,
      hookWorkers: 8,
      pushEveryMs: 1_000,
      repositories: abuserClones.map((clone, r) => ({
        hookPath: `/hooks/${abuserNs}/abuser-${r}`,
        cloneDir: clone.dir,
        functions: Array.from({ length: ABUSER.functionsEach }, (_, f) => `noise-${r}-${f}`),
      })),
    });
    const loud: Round[] = [];
    let loudLoad = '';
    let counts: FloodCounts | undefined;
    try {
      await new Promise((r) => setTimeout(r, FLOOD_LEAD_MS));
      loudLoad = await watch(async () => {
        for (let i = 0; i < ROUNDS; i++) loud.push(await pushToServe(1 + ROUNDS + i));
      });
    } finally {
      counts = await flood.stop();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const phases = (rs: Round[]) =>
      `total ${rs.map((r) => r.total).join('/')} ms (median ${median(rs.map((r) => r.total))}); median to 202 ${median(rs.map((r) => r.hook))}, ` +
      `sync ran ${median(rs.map((r) => r.syncRun))}, to synced ${median(rs.map((r) => r.synced))}, to build Job ${median(rs.map((r) => r.jobMade))}, to deployed ${median(rs.map((r) => r.deployed))}`;
    const abuserJobs = (await kit.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: kit.buildNs, labelSelector: `sless.kube5s.ru/function-namespace=${abuserNs}` })).items.length;
    // Its share of builds: the Jobs it started never finish, so it never had more than the cap.
    assert.ok(abuserJobs <= DEFAULT_BUILDS_PER_NAMESPACE, `the abuser has ${abuserJobs} build Jobs, more than its share of ${DEFAULT_BUILDS_PER_NAMESPACE}`);
    t.diagnostic(`without the abuser: ${phases(quiet)}; ${quietLoad}`);
    t.diagnostic(`with the abuser:    ${phases(loud)}; ${loudLoad}`);
    t.diagnostic(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const perSecond = counts ? ((counts.v1 + counts.v1Limited + counts.hooks + counts.hooksLimited) / Math.max(1, counts.seconds)).toFixed(0) : '?';
    t.diagnostic(`the abuser sent ${JSON.stringify(counts)} (${perSecond} requests/s); its build Jobs: ${abuserJobs}`);
    const ratio = median(loud.map((r) => r.total)) / median(quiet.map((r) => r.total));
    t.diagnostic(`ratio of medians with/without the abuser: ${ratio.toFixed(2)}`);
    assert.ok(counts && counts.v1Limited > 0 && counts.hooksLimited > 0, `the abuser reached its limits: ${JSON.stringify(counts)}`);
    // The victim is still served while the abuser floods (each round above waited for Ready on the new image).
    // What the queues decide: the victim's sync never waits behind the abuser's. The time from the 202 to
    // the synced status that its syncs did not run is the wait for a slot plus the watch and status
    // round trips (about 0.2 s with and without the abuser here); behind the abuser's syncs (5 s each
    // while it floods) it would be seconds.
    const waited = (r: Round) => Math.max(0, r.synced - r.hook - r.syncRun);
    t.diagnostic(`victim's wait for a sync slot, median: ${median(quiet.map(waited))} ms without, ${median(loud.map(waited))} ms with the abuser`);
    assert.ok(median(loud.map(waited)) <= QUEUE_WAIT_BOUND_MS, `the victim's sync waited ${median(loud.map(waited))} ms (median) for a slot while the abuser flooded`);
    // NOT asserted: the goal, median with the abuser <= 1.2x the median without (docs/benchmarks.md, Fair shares:
    // the figures of each run). With the flood in its own process and the per-repository share: 1.41x (the
    // abuser's 4 repositories' shares added up); with a namespace's repositories held to one share beside a
    // lighter namespace: 1.13, 1.12, 1.08 (5 rounds) and 1.18 (15 rounds, load average 3.5). The victim's
    // sync still runs about twice as long beside the flood (the API server, the git server and SeaweedFS
    // share 2 cores with it, which no queue decides), so on a busier machine the ratio can pass 1.2.
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

/** What the flood child sent and was answered (429: refused by a rate limit), its wall and CPU seconds. */
interface FloodCounts {
  readonly v1: number;
  readonly v1Limited: number;
  readonly hooks: number;
  readonly hooksLimited: number;
  readonly failed: number;
  readonly pushes: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
}

/** Starts fair-shares-flood.ts in a child process; `stop()` ends it and returns its counts. */
async function startFlood(flood: Flood): Promise<{ stop(): Promise<FloodCounts> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fair-shares-flood.ts'), JSON.stringify(flood)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = async (what: string) => {
    const next = await lines.next();
    if (next.done) throw new Error(`the flood child exited (code ${await exited}) before ${what}`);
    return JSON.parse(next.value) as unknown;
  };
  await line('it was ready');
  return {
    async stop() {
      child.stdin.end('stop\n');
      const counts = (await line('it reported its counts')) as FloodCounts;
      await exited;
      return counts;
    },
  };
}
