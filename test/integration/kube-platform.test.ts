// KubernetesPlatform against the real API server (with the sless CRDs) and a real S3 server: what /v1
// does to Function, Trigger, FunctionJob and FunctionRepository objects, and where /fn sends calls.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { hashFiles } from '../../src/source/code-hash.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import type { FunctionResource, RepositoryResource, TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { PlatformError, type PlatformErrorCode } from '../../src/platform/types.ts';
import { markDeploymentAvailable } from '../helpers/kube-harness.ts';
import { unpacked } from '../helpers/unpacked-code.ts';
import { GROUP, NODE_CODE, platformSettings, setupPlatformKit, testS3Store, VERSION, type PlatformKit } from './kube-platform-kit.ts';

async function rejectsWith(promise: Promise<unknown>, code: PlatformErrorCode, pattern?: RegExp): Promise<PlatformError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PlatformError, `expected a PlatformError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return err;
  }
  assert.fail(`expected ${code}, but it resolved`);
}

let kit: PlatformKit;
before(async () => {
  kit = await setupPlatformKit('kplatform');
});
after(() => kit.dispose());

const getObject = async <T>(plural: string, name: string): Promise<T> =>
  (await kit.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural, name })) as T;

describe('functions made through /v1', () => {
  it('creates a Function without code and without a Trigger of its own (no http trigger: it serves)', async () => {
    const rec = await kit.platform.createFunction(kit.ns, { name: 'hello', runtime: 'nodejs20', env: { A: '1', B: '2' } });
    assert.equal(rec.managedBy, 'api');
    assert.equal(rec.phase, 'Pending');
    assert.equal(rec.httpEnabled, true);
    assert.equal(rec.memoryMb, 128);
    assert.equal(rec.timeoutSec, 30);
    assert.equal(rec.entrypoint, 'handler.handle');
    assert.equal(rec.codeHash, undefined);
    assert.equal(rec.url, `https://fn.example.test/fn/${kit.ns}/hello`);
    const fn = await getObject<FunctionResource>('functions', 'hello');
    assert.equal(fn.spec?.s3Key, undefined);
    assert.deepEqual(await kit.platform.listTriggers(kit.ns), [], 'no <fn>-http in the way of the client’s own');
    assert.deepEqual((await kit.platform.listFunctions(kit.ns)).map((f) => f.name), ['hello']);
    await rejectsWith(kit.platform.createFunction(kit.ns, { name: 'hello', runtime: 'nodejs20' }), 'already_exists');
  });

  it('stores uploaded code as a build context in S3 and points the Function at it', async () => {
    const code = await unpacked(NODE_CODE);
    const rec = await kit.platform.uploadCode(kit.ns, 'hello', code);
    assert.equal(existsSync(code.dir), false, 'the unpacked folder is removed once the context is stored');
    assert.equal(rec.codeHash, hashFiles(NODE_CODE));
    const fn = await getObject<FunctionResource>('functions', 'hello');
    assert.equal(fn.spec?.codeHash, rec.codeHash);
    // Node.js code without dependency files: nothing runs at build time, so the context is stored for a layer build (src/build/build-kind.ts).
    assert.match(fn.spec?.s3Key ?? '', /^contexts\/[0-9a-f]{64}\.layer\.tar\.gz$/);
    assert.equal(fn.spec?.s3Bucket, process.env.SLESS_TEST_S3_BUCKET);
    assert.equal(await kit.store.has(fn.spec!.s3Key!), true);
    // The same code again: the same content-addressed key.
    await kit.platform.uploadCode(kit.ns, 'hello', await unpacked([...NODE_CODE].reverse()));
    assert.equal((await getObject<FunctionResource>('functions', 'hello')).spec?.s3Key, fn.spec?.s3Key);
  });

  it('gives the uploaded files back from the stored context (paths, modes, contents)', async () => {
    const source = await kit.platform.getSource(kit.ns, 'hello');
    const norm = (files: readonly { path: string; mode: string; content: Buffer }[]) =>
      [...files].map((f) => ({ path: f.path, mode: f.mode, content: f.content.toString('utf8') })).sort((a, b) => (a.path < b.path ? -1 : 1));
    assert.deepEqual(norm(source), norm(NODE_CODE));
    await kit.platform.createFunction(kit.ns, { name: 'empty', runtime: 'python3.12' });
    await rejectsWith(kit.platform.getSource(kit.ns, 'empty'), 'not_found', /no code yet/);
  });

  it('PUT replaces the settings (removed env keys go), keeps the code, and toggles http', async () => {
    const before = await getObject<FunctionResource>('functions', 'hello');
    const rec = await kit.platform.updateFunction(kit.ns, 'hello', { name: 'hello', runtime: 'nodejs20', env: { A: '9' }, memoryMb: 256, httpEnabled: false });
    assert.deepEqual(rec.env, { A: '9' });
    assert.equal(rec.memoryMb, 256);
    assert.equal(rec.httpEnabled, false);
    const fn = await getObject<FunctionResource>('functions', 'hello');
    assert.deepEqual(fn.spec?.env, { A: '9' });
    assert.equal(fn.spec?.s3Key, before.spec?.s3Key, 'a config change needs no new context');
    assert.equal((await getObject<TriggerResource>('triggers', 'hello-http')).spec?.enabled, false);
    assert.equal((await kit.platform.getFunction(kit.ns, 'hello')).httpEnabled, false);
    await rejectsWith(kit.platform.updateFunction(kit.ns, 'hello', { name: 'other', runtime: 'nodejs20' }), 'invalid', /renamed/);
  });

  it('a runtime change makes a new build context from the stored code', async () => {
    const before = await getObject<FunctionResource>('functions', 'hello');
    await kit.platform.updateFunction(kit.ns, 'hello', { name: 'hello', runtime: 'nodejs22' });
    const fn = await getObject<FunctionResource>('functions', 'hello');
    assert.equal(fn.spec?.runtime, 'nodejs22');
    assert.equal(fn.spec?.codeHash, before.spec?.codeHash);
    assert.notEqual(fn.spec?.s3Key, before.spec?.s3Key);
    assert.equal(await kit.store.has(fn.spec!.s3Key!), true);
    assert.equal((await kit.platform.getSource(kit.ns, 'hello')).length, NODE_CODE.length);
  });

  it('stores scale in spec.scale as written and reads it back; the API server refuses min > max', async () => {
    const rec = await kit.platform.updateFunction(kit.ns, 'hello', { name: 'hello', runtime: 'nodejs22', scale: { min: 0, idle: '30s' } });
    assert.deepEqual(rec.scale, { min: 0, idle: '30s' });
    assert.deepEqual((await getObject<FunctionResource>('functions', 'hello')).spec?.scale, { min: 0, idle: '30s' });
    assert.deepEqual((await kit.platform.getFunction(kit.ns, 'hello')).scale, { min: 0, idle: '30s' });
    // The platform stores what it is given: the /v1 mapper carries the current scale over a PUT without one.
    await rejectsWith(kit.platform.updateFunction(kit.ns, 'hello', { name: 'hello', runtime: 'nodejs22', scale: { min: 3, max: 2 } }), 'invalid', /scale\.min must not be above scale\.max/);
  });

  it('refuses what the API server refuses, with its message', async () => {
    await rejectsWith(kit.platform.createFunction(kit.ns, { name: 'tiny', runtime: 'nodejs20', memoryMb: 10 }), 'invalid', /memoryMB/);
  });

  it('deletes a function; then it is not found', async () => {
    await kit.platform.deleteFunction(kit.ns, 'empty');
    await rejectsWith(kit.platform.getFunction(kit.ns, 'empty'), 'not_found');
    await rejectsWith(kit.platform.deleteFunction(kit.ns, 'empty'), 'not_found');
  });
});

describe('http triggers of /v1 functions: one rule', () => {
  const httpEnabled = async (fn: string) => (await kit.platform.getFunction(kit.ns, fn)).httpEnabled;

  it('serves while the function has no http trigger or any enabled one; a client may name its trigger <fn>-http', async () => {
    await kit.platform.createFunction(kit.ns, { name: 'web', runtime: 'nodejs20' });
    assert.equal(await httpEnabled('web'), true);
    const t = await kit.platform.createTrigger(kit.ns, { name: 'web-http', type: 'http', functionRef: 'web' });
    assert.equal(t.enabled, true);
    await kit.platform.setTriggerEnabled(kit.ns, 'web-http', false);
    assert.equal(await httpEnabled('web'), false);
    await kit.platform.updateFunction(kit.ns, 'web', { name: 'web', runtime: 'nodejs20', env: { A: '1' } });
    assert.equal(await httpEnabled('web'), false, 'a PUT without http_enabled leaves the triggers alone');
    await kit.platform.createTrigger(kit.ns, { name: 'web-other', type: 'http', functionRef: 'web' });
    assert.equal(await httpEnabled('web'), true);
  });

  it('removes the enabled <fn>-http an older version made, once a client manages the function’s http triggers', async () => {
    const fn = await kit.platform.createFunction(kit.ns, { name: 'old', runtime: 'nodejs20' });
    const owner = await getObject<FunctionResource>('functions', 'old');
    // What createFunction made before: an enabled <fn>-http owned by the Function, without the client mark.
    await kit.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'triggers',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Trigger',
        metadata: {
          name: 'old-http',
          labels: { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/function': 'old' },
          ownerReferences: [{ apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', name: fn.name, uid: owner.metadata?.uid ?? '', blockOwnerDeletion: false }],
        },
        spec: { type: 'http', functionRef: 'old', enabled: true },
      },
    });
    await kit.platform.createTrigger(kit.ns, { name: 'old-web', type: 'http', functionRef: 'old' });
    await kit.platform.setTriggerEnabled(kit.ns, 'old-web', false);
    assert.deepEqual((await kit.platform.listTriggers(kit.ns)).filter((t) => t.functionRef === 'old').map((t) => [t.name, t.enabled]), [['old-web', false]]);
    assert.equal(await httpEnabled('old'), false, 'disabling the client’s trigger disables the function');
  });
});

describe('objects a FunctionRepository manages', () => {
  before(async () => {
    const labels = { 'sless.kube5s.ru/repository': 'shop', 'sless.kube5s.ru/function': 'cart' };
    const create = (plural: string, kind: string, name: string, spec: object) =>
      kit.custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: kit.ns,
        plural,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name, labels }, spec },
      });
    await create('functions', 'Function', 'cart', { runtime: 'python3.12', source: { repository: 'shop', path: 'functions/cart', revision: 'abc' } });
    await create('triggers', 'Trigger', 'cart-http', { type: 'http', functionRef: 'cart', enabled: true });
    await create('functionjobs', 'FunctionJob', 'cart-seed', { functionRef: 'cart', runID: 1 });
  });

  it('are listed as managed by git:<repository>', async () => {
    assert.equal((await kit.platform.getFunction(kit.ns, 'cart')).managedBy, 'git:shop');
    assert.equal((await kit.platform.getTrigger(kit.ns, 'cart-http')).managedBy, 'git:shop');
    assert.equal((await kit.platform.getJob(kit.ns, 'cart-seed')).managedBy, 'git:shop');
  });

  it('answer managed_by_git to every change, naming the repository', async () => {
    for (const attempt of [
      () => kit.platform.updateFunction(kit.ns, 'cart', { name: 'cart', runtime: 'python3.12' }),
      () => kit.platform.deleteFunction(kit.ns, 'cart'),
      async () => kit.platform.uploadCode(kit.ns, 'cart', await unpacked(NODE_CODE)),
      () => kit.platform.setTriggerEnabled(kit.ns, 'cart-http', false),
      () => kit.platform.deleteTrigger(kit.ns, 'cart-http'),
      () => kit.platform.deleteJob(kit.ns, 'cart-seed'),
    ]) {
      const err = await rejectsWith(attempt(), 'managed_by_git', /FunctionRepository .*\/shop/);
      assert.equal(err.repository, 'shop');
    }
    assert.equal((await getObject<TriggerResource>('triggers', 'cart-http')).spec?.enabled, true);
  });
});

describe('triggers and jobs', () => {
  before(() => kit.platform.createFunction(kit.ns, { name: 'worker', runtime: 'python3.11' }));

  it('creates a cron Trigger owned by its Function and toggles it', async () => {
    const t = await kit.platform.createTrigger(kit.ns, { name: 'nightly', type: 'cron', functionRef: 'worker', schedule: '0 3 * * *', timezone: 'Europe/Moscow', eventJson: '{"k":1}' });
    assert.deepEqual([t.type, t.schedule, t.timezone, t.eventJson, t.enabled, t.managedBy], ['cron', '0 3 * * *', 'Europe/Moscow', '{"k":1}', true, 'api']);
    assert.equal((await kit.platform.setTriggerEnabled(kit.ns, 'nightly', false)).enabled, false);
    assert.ok((await kit.platform.listTriggers(kit.ns)).some((x) => x.name === 'nightly' && !x.enabled));
    await kit.platform.deleteTrigger(kit.ns, 'nightly');
    await rejectsWith(kit.platform.getTrigger(kit.ns, 'nightly'), 'not_found');
  });

  it('refuses a bad schedule, a zone that does not exist, or an unknown function', async () => {
    await rejectsWith(kit.platform.createTrigger(kit.ns, { name: 'bad', type: 'cron', functionRef: 'worker', schedule: '61 * * * *' }), 'invalid');
    await rejectsWith(kit.platform.createTrigger(kit.ns, { name: 'bad', type: 'cron', functionRef: 'worker', schedule: '0 3 * * *', timezone: 'Mars/Olympus' }), 'invalid');
    await rejectsWith(kit.platform.createTrigger(kit.ns, { name: 'bad', type: 'cron', functionRef: 'worker' }), 'invalid', /needs a schedule/);
    await rejectsWith(kit.platform.createTrigger(kit.ns, { name: 'bad', type: 'http', functionRef: 'ghost' }), 'invalid', /ghost/);
    await rejectsWith(kit.platform.createJob(kit.ns, { name: 'bad', functionRef: 'ghost' }), 'invalid', /ghost/);
  });

  it('creates a FunctionJob (run 1 by default), reads and deletes it', async () => {
    const j = await kit.platform.createJob(kit.ns, { name: 'seed', functionRef: 'worker', eventJson: '{"n":3}' });
    assert.deepEqual([j.runId, j.phase, j.eventJson, j.managedBy], [1, 'Pending', '{"n":3}', 'api']);
    assert.equal((await kit.platform.getJob(kit.ns, 'seed')).functionRef, 'worker');
    await rejectsWith(kit.platform.createJob(kit.ns, { name: 'seed', functionRef: 'worker' }), 'already_exists');
    await kit.platform.deleteJob(kit.ns, 'seed');
    await rejectsWith(kit.platform.getJob(kit.ns, 'seed'), 'not_found');
  });
});

describe('repositories', () => {
  const credentials = { username: 'deploy', password: 'pa55-word-never-returned' };
  const webhookSecret = 'hook-secret-never-returned';

  it('keeps credentials and the webhook secret in a Secret owned by the repository, never in the record', async () => {
    const rec = await kit.platform.createRepository(kit.ns, { name: 'shop', url: 'https://git.example.test/shop.git', credentials, webhookSecret });
    assert.equal(rec.secretName, 'shop-credentials');
    assert.equal(rec.branch, 'main');
    assert.equal(rec.webhookPath, `/hooks/${kit.ns}/shop`);
    const listed = JSON.stringify([rec, await kit.platform.listRepositories(kit.ns), await kit.platform.getRepository(kit.ns, 'shop')]);
    assert.doesNotMatch(listed, /pa55-word|hook-secret/);
    const secret = await kit.core.readNamespacedSecret({ name: 'shop-credentials', namespace: kit.ns });
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    assert.deepEqual(data, { username: 'deploy', password: credentials.password, webhookSecret });
    const repo = await getObject<RepositoryResource>('functionrepositories', 'shop');
    assert.equal(secret.metadata?.ownerReferences?.[0]?.uid, repo.metadata?.uid);
    assert.deepEqual(repo.spec?.secretRef, { name: 'shop-credentials' });
    await rejectsWith(kit.platform.createRepository(kit.ns, { name: 'shop', url: 'https://x.test/y.git' }), 'already_exists');
  });

  it('tells /hooks the branch and secret', async () => {
    assert.deepEqual(await kit.platform.webhookTarget(kit.ns, 'shop'), { branch: 'main', secret: webhookSecret });
    assert.equal(await kit.platform.webhookTarget(kit.ns, 'nope'), undefined);
    await kit.platform.createRepository(kit.ns, { name: 'open', url: 'https://x.test/open.git', branch: 'dev' });
    assert.deepEqual(await kit.platform.webhookTarget(kit.ns, 'open'), { branch: 'dev' });
  });

  it('asks for a sync by annotating the repository with the time', async () => {
    const t0 = Date.now();
    await kit.platform.requestSync(kit.ns, 'shop', 'test');
    const at = (await getObject<RepositoryResource>('functionrepositories', 'shop')).metadata?.annotations?.['sless.kube5s.ru/requestedAt'];
    assert.match(at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Date.parse(at!) >= t0 - 1000);
    await rejectsWith(kit.platform.requestSync(kit.ns, 'nope', 'test'), 'not_found');
  });

  it("carries a push's head as a hint with the request, and drops an older one with a request that names none", async () => {
    const revision = async () => (await getObject<RepositoryResource>('functionrepositories', 'shop')).metadata?.annotations?.['sless.kube5s.ru/requestedRevision'];
    await kit.platform.requestSync(kit.ns, 'shop', 'webhook', { head: 'b'.repeat(40) });
    assert.equal(await revision(), 'b'.repeat(40));
    await kit.platform.requestSync(kit.ns, 'shop', 'api');
    assert.equal(await revision(), undefined, 'a later request without a head must not hand the sync the old one');
  });

  it('deleting a repository takes its Secret with it', async () => {
    await kit.platform.deleteRepository(kit.ns, 'shop');
    await rejectsWith(kit.platform.getRepository(kit.ns, 'shop'), 'not_found');
    await assert.rejects(kit.core.readNamespacedSecret({ name: 'shop-credentials', namespace: kit.ns }), (e: { code?: number }) => e.code === 404);
  });
});

describe('resolveEndpoint', () => {
  before(() => kit.platform.createFunction(kit.ns, { name: 'svc', runtime: 'nodejs20', timeoutSec: 7 }));

  const deployment = (replicas: number, disabled = false) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    // The reconciler marks a switched-off Deployment; unmarked at 0, a function is scaled to zero (idle).
    metadata: { name: 'svc', namespace: kit.ns, ...(disabled ? { annotations: { 'sless.kube5s.ru/http-disabled': 'true' } } : {}) },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'svc' } },
      template: { metadata: { labels: { app: 'svc' } }, spec: { containers: [{ name: 'function', image: 'registry.test/svc@sha256:' + 'a'.repeat(64) }] } },
    },
  });

  it('answers not-found, then not-ready, then ready at the Service, then idle at zero, then disabled', async () => {
    assert.deepEqual(await kit.platform.resolveEndpoint(kit.ns, 'nope'), { kind: 'not-found' });
    const pending = await kit.platform.resolveEndpoint(kit.ns, 'svc');
    assert.equal(pending.kind, 'not-ready');
    assert.match(pending.kind === 'not-ready' ? pending.reason : '', /Pending/);

    await kit.apps.createNamespacedDeployment({ namespace: kit.ns, body: deployment(1) });
    assert.equal((await kit.platform.resolveEndpoint(kit.ns, 'svc')).kind, 'not-ready');
    await markDeploymentAvailable(kit.kc, kit.ns, 'svc');
    assert.deepEqual(await kit.platform.resolveEndpoint(kit.ns, 'svc'), { kind: 'ready', baseUrl: `http://svc.${kit.ns}.svc.cluster.test:80`, timeoutSec: 7 });

    await kit.apps.replaceNamespacedDeployment({ name: 'svc', namespace: kit.ns, body: deployment(0) });
    assert.deepEqual(await kit.platform.resolveEndpoint(kit.ns, 'svc'), { kind: 'idle', timeoutSec: 7 });
    await kit.apps.replaceNamespacedDeployment({ name: 'svc', namespace: kit.ns, body: deployment(0, true) });
    assert.deepEqual(await kit.platform.resolveEndpoint(kit.ns, 'svc'), { kind: 'disabled' });
  });

  it('asks the API server once per TTL however many calls arrive', async () => {
    const cached = new KubernetesPlatform({ kubeConfig: kit.kc, store: kit.store, settings: platformSettings(kit.store), endpointTtl: { readyMs: 60_000, otherMs: 60_000 } });
    const answers = await Promise.all(Array.from({ length: 50 }, () => cached.resolveEndpoint(kit.ns, 'svc')));
    for (let i = 0; i < 50; i++) answers.push(await cached.resolveEndpoint(kit.ns, 'svc'));
    assert.ok(answers.every((a) => a.kind === 'disabled'));
    assert.equal(cached.endpointLoads, 1);
  });
});

describe('namespaces, health and an unreachable API server', () => {
  it('creating in a namespace that does not exist says to ensure it first', async () => {
    await rejectsWith(kit.platform.createFunction(`${kit.ns}-missing`, { name: 'f', runtime: 'nodejs20' }), 'not_found', /ensure/);
  });

  it('ensureNamespace creates a namespace once and is idempotent', async () => {
    const name = `${kit.ns}-ensured`;
    await kit.platform.ensureNamespace(name);
    await kit.platform.ensureNamespace(name);
    const ns = await kit.core.readNamespace({ name });
    assert.equal(ns.metadata?.labels?.['app.kubernetes.io/managed-by'], 'sless');
    await kit.core.deleteNamespace({ name });
  });

  it('ready() is ok with the API server and says why not without it', async () => {
    assert.deepEqual(await kit.platform.ready(), { ok: true });
    const down = new KubeConfig();
    down.loadFromOptions({
      clusters: [{ name: 'down', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'down', cluster: 'down', user: 'u' }],
      currentContext: 'down',
    });
    const offline = new KubernetesPlatform({ kubeConfig: down, store: testS3Store(), settings: platformSettings(kit.store) });
    const r = await offline.ready();
    assert.equal(r.ok, false);
    assert.match(r.detail ?? '', /Kubernetes API server/);
    await rejectsWith(offline.listFunctions('x'), 'unavailable', /cannot reach the Kubernetes API server/);
    await assert.rejects(offline.resolveEndpoint('x', 'y'), (e: PlatformError) => e.code === 'unavailable');
  });
});
