// Pull-request previews on Kubernetes, control plane (docs/previews.md "Kubernetes"), on the real
// kube-apiserver and a real Gitea 1.27.3 (services kube, s3, git, gitea): three functions on main,
// pull requests opened, pushed to, closed through Gitea's API; each delivery is Gitea's own pull request
// JSON read by the webhook parser and handed to KubernetesPlatform's previews (the receiving replica's
// part); the controller (leader) builds. Builds and rollouts are played by the harness (no kubelet).
// The tests run in order and share one repository and one controller.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api, RbacAuthorizationV1Api, type V1LimitRange, type V1ResourceQuota } from '@kubernetes/client-node';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import type { PlatformPreviews } from '../../src/platform/types.ts';
import type { FunctionResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { readPullRequest } from '../../src/webhook/pull-request.ts';
import { WorkingCopy, type CommitStatusRecord } from '../helpers/gitea-api.ts';
import { eventually, getCustom } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { batchApi, core, customApi, DIGEST_A, patchCustom, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';
import { platformSettings, testS3Store } from './kube-platform-kit.ts';
import { deletedRepositories, deliverPullRequest, fn, openPullRequest, previewImageJobs, previewRepositories as repositoriesIn, previewsGitea } from './kube-previews-kit.ts';

const api = previewsGitea();

const quota = (name: string, pods: string): V1ResourceQuota => ({ metadata: { name }, spec: { hard: { pods, 'count/configmaps': '40' } } });
const limitRange = (name: string, cpu: string): V1LimitRange => ({ metadata: { name }, spec: { limits: [{ type: 'Container', _default: { cpu }, defaultRequest: { cpu } }] } });
const COPY_LABELS = (base: string, number: number) => ({ 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/preview-of': base, 'sless.kube5s.ru/preview-number': String(number) });

describe('previews on Kubernetes: pull requests → preview namespaces built by the controller', () => {
  let kit: Kit;
  let wc: WorkingCopy;
  let repo: { cloneUrl: string; fullName: string };
  /** What /hooks hands a verified pull-request delivery to on any replica. */
  let previews: PlatformPreviews;

  const deliver = (number: number, action: string, head?: string) => deliverPullRequest({ api, fullName: repo.fullName, previews, namespace: kit.ns }, number, action, head);
  const openPr = (branch: string) => openPullRequest(api, repo.fullName, branch);
  const status = (sha: string, done: (s: CommitStatusRecord) => boolean, what: string) =>
    eventually(
      async () => {
        const s = (await api.latestStatuses(repo.fullName, sha)).get('sless/preview');
        if (!s || !done(s)) throw new Error(`${what}: sless/preview so far ${JSON.stringify(s && [s.status, s.description])}`);
        return s;
      },
      { timeoutMs: 60_000 },
    );
  const entry = async (number: number) => (await kit.getRepository('fns')).status?.previews?.find((p) => p.number === number);
  const previewFunctions = async (ns: string) =>
    ((await customApi(kit.kc).listNamespacedCustomObject({ group: 'sless.kube5s.ru', version: 'v1alpha1', namespace: ns, plural: 'functions' })) as { items: FunctionResource[] }).items;
  const namespaceGone = (name: string) =>
    eventually(
      async () => {
        const ns = await core(kit.kc).readNamespace({ name }).catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
        if (ns && !ns.metadata?.deletionTimestamp) throw new Error(`namespace ${name} is still there`);
      },
      { timeoutMs: 60_000 },
    );
  /** The repositories the Job deleting the images of preview `number` empties (the only such Job: these previews prune no function). */
  const imagesDeleted = (number: number) =>
    eventually(async () => deletedRepositories((await previewImageJobs(kit.kc, kit.buildNs, kit.ns, number))[0], kit.ns), { timeoutMs: 30_000 });
  const previewRepositories = (number: number, names: string[]) => repositoriesIn(`${kit.ns}-pr-${number}`, names);
  const setTtl = (ttl: string) =>
    patchCustom(kit, 'functionrepositories', 'fns', [{ op: 'replace', path: '/spec/previews/ttl', value: ttl }]);
  const buildAndServe = async (ns: string, name: string) => {
    const job = await eventually(
      async () => {
        const jobs = (await batchApi(kit.kc).listNamespacedJob({ namespace: kit.buildNs, labelSelector: `sless.kube5s.ru/function-namespace=${ns},sless.kube5s.ru/function=${name}` })).items;
        const running = jobs.find((j) => !j.status?.succeeded && !j.status?.failed);
        if (!running) throw new Error(`no running build Job for ${ns}/${name}`);
        return running;
      },
      { timeoutMs: 30_000 },
    );
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serveIn(ns, name);
  };

  before(async () => {
    repo = await api.createRepo(`kube-previews-${randomBytes(4).toString('hex')}`, { private: true });
    kit = await setupKit('kube-previews', sharedS3(), {
      git: { allowedHosts: [new URL(repo.cloneUrl).host] },
      publicBaseUrl: 'https://fn.example.com',
      systemNamespace: 'sless-system',
      tenantBinding: { serviceAccount: 'sless-controller', namespace: 'sless-system' },
    });
    wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
    await wc.commit({ ...fn('alpha', 'v1'), ...fn('beta', 'v1'), ...fn('gamma', 'v1') }, 'three functions', 'main');
    const token = await api.createToken(`kube-previews-${randomBytes(3).toString('hex')}`, ['write:repository']);
    await core(kit.kc).createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'fns-git' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token, webhookSecret: 'w' } },
    });
    // The operator bounds the tenant: the previews must be bounded alike.
    await core(kit.kc).createNamespacedResourceQuota({ namespace: kit.ns, body: quota('compute', '50') });
    await core(kit.kc).createNamespacedLimitRange({ namespace: kit.ns, body: limitRange('defaults', '500m') });
    await kit.startController(undefined, { watchAll: true });
    const store = testS3Store();
    previews = new KubernetesPlatform({ kubeConfig: kit.kc, store, settings: platformSettings(store) }).previews;
    await kit.createRepository('fns', {
      url: repo.cloneUrl,
      path: 'functions',
      interval: '5s',
      secretRef: { name: 'fns-git' },
      commitStatus: {},
      previews: { enabled: true, maxOpen: 2 },
    });
    await eventually(async () => assert.equal((await kit.listFunctions()).length, 3), { timeoutMs: 60_000 });
  });
  after(async () => {
    await kit?.dispose();
    await wc?.remove();
  });

  let pr1: number;
  let ns1: string;

  it('a PR changing one of three functions: its namespace with the preview labels and the tenant RoleBinding, only the changed Function, status.previews, a commit status', async () => {
    await wc.git('checkout', '-q', '-b', 'change-alpha');
    const head = await wc.commit(fn('alpha', 'v2-pr'), 'alpha v2', 'change-alpha');
    pr1 = await openPr('change-alpha');
    ns1 = `${kit.ns}-pr-${pr1}`;
    assert.equal((await deliver(pr1, 'opened')).outcome, 'accepted');
    const e = await eventually(
      async () => {
        const p = await entry(pr1);
        if (!p?.planned) throw new Error(`not planned yet: ${JSON.stringify(p)}`);
        return p;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual([e.namespace, e.branch, e.head], [ns1, 'change-alpha', head]);
    assert.deepEqual(e.functions, [
      { name: 'alpha', state: 'built', path: 'functions/alpha' },
      { name: 'beta', state: 'production', path: 'functions/beta' },
      { name: 'gamma', state: 'production', path: 'functions/gamma' },
    ]);
    const ns = await core(kit.kc).readNamespace({ name: ns1 });
    assert.deepEqual(
      [ns.metadata?.labels?.['sless.kube5s.ru/preview-of'], ns.metadata?.labels?.['sless.kube5s.ru/preview-number'], ns.metadata?.labels?.['sless.kube5s.ru/preview-repository']],
      [kit.ns, String(pr1), 'fns'],
    );
    const binding = await kit.kc.makeApiClient(RbacAuthorizationV1Api).readNamespacedRoleBinding({ namespace: ns1, name: 'sless-tenant' });
    assert.equal(binding.roleRef.name, 'sless-tenant');
    const fns = await previewFunctions(ns1);
    assert.deepEqual(fns.map((f) => f.metadata?.name), ['alpha']);
    assert.equal(fns[0]?.metadata?.ownerReferences, undefined, 'no ownerReference across namespaces');
    assert.equal(fns[0]?.spec?.source?.revision, head);
    const pending = await status(head, (s) => s.status === 'pending', 'pending while alpha builds');
    assert.equal(pending.description, 'building 1 of 1 changed function');
    assert.equal(pending.target_url, `https://fn.example.com/funcs/${ns1}`);
    await buildAndServe(ns1, 'alpha');
    const done = await status(head, (s) => s.status === 'success', 'success once alpha serves');
    assert.equal(done.description, '1 built, 2 from production');
    assert.equal((await kit.getFunction('alpha'))?.spec?.source?.revision !== head, true, 'production keeps main');
  });

  it("the base namespace's ResourceQuota and LimitRange: copied into the preview, kept equal at each reconcile, the preview's own never touched", async () => {
    const api = core(kit.kc);
    const readQuota = (ns: string, name: string) => api.readNamespacedResourceQuota({ namespace: ns, name }).catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
    const readRange = (ns: string, name: string) => api.readNamespacedLimitRange({ namespace: ns, name }).catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
    // Made by the first build, before its Function was applied.
    const [q, r] = [await readQuota(ns1, 'compute'), await readRange(ns1, 'defaults')];
    assert.deepEqual(q?.spec, (await readQuota(kit.ns, 'compute'))?.spec);
    assert.deepEqual(r?.spec, (await readRange(kit.ns, 'defaults'))?.spec);
    for (const o of [q, r]) assert.deepEqual(o?.metadata?.labels, COPY_LABELS(kit.ns, pr1));
    // The preview namespace's own quota (an operator's policy engine puts one in every namespace), of a name the base then uses too.
    const own = await api.createNamespacedResourceQuota({ namespace: ns1, body: quota('own', '3') });
    await api.createNamespacedResourceQuota({ namespace: kit.ns, body: quota('own', '99') });
    await api.replaceNamespacedResourceQuota({ namespace: kit.ns, name: 'compute', body: quota('compute', '40') });
    await api.deleteNamespacedLimitRange({ namespace: kit.ns, name: 'defaults' });
    // No delivery: the repository's next reconcile (interval 5s) brings the copies in step.
    await eventually(
      async () => {
        assert.equal((await readQuota(ns1, 'compute'))?.spec?.hard?.pods, '40', 'the changed quota');
        assert.equal(await readRange(ns1, 'defaults'), undefined, 'the deleted LimitRange’s copy');
      },
      { timeoutMs: 30_000 },
    );
    await api.deleteNamespacedResourceQuota({ namespace: kit.ns, name: 'own' });
    await api.replaceNamespacedResourceQuota({ namespace: kit.ns, name: 'compute', body: quota('compute', '30') });
    await eventually(async () => assert.equal((await readQuota(ns1, 'compute'))?.spec?.hard?.pods, '30'), { timeoutMs: 30_000 });
    const ownAfter = await readQuota(ns1, 'own');
    assert.equal(ownAfter?.metadata?.resourceVersion, own.metadata?.resourceVersion, 'the preview’s own quota was neither replaced nor deleted');
    assert.deepEqual(ownAfter?.spec?.hard, own.spec?.hard);
  });

  it('a quota the API server refuses to copy stalls the preview, naming it, and applies none of its functions until the copy is made', async () => {
    const api = core(kit.kc);
    const admission = kit.kc.makeApiClient(AdmissionregistrationV1Api);
    const name = `refuse-quota-${kit.ns}`;
    // A real refusal: an admission policy refusing a ResourceQuota named `refused` in this test's preview namespaces.
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['resourcequotas'] }] },
          validations: [{ expression: `object.metadata.name != 'refused' || !request.namespace.startsWith('${kit.ns}-pr-')`, message: 'refused by the test policy', reason: 'Forbidden' }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({ body: { metadata: { name }, spec: { policyName: name, validationActions: ['Deny'] } } });
    await eventually(
      async () => {
        const answer = await api.createNamespacedResourceQuota({ namespace: ns1, body: quota('refused', '1'), dryRun: 'All' }).then(() => 200, (e: { code?: number }) => e.code);
        assert.equal(answer, 403, 'the policy is in force');
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await api.createNamespacedResourceQuota({ namespace: kit.ns, body: quota('refused', '1') });
    // An open preview: the next reconcile says so in its status.
    await eventually(async () => assert.match((await entry(pr1))?.message ?? '', new RegExp(`ResourceQuotas and LimitRanges failed: cannot copy ResourceQuota ${kit.ns}/refused into the preview namespace ${ns1}: .*refused by the test policy`)), {
      timeoutMs: 30_000,
    });
    // Gone from the base again: the message goes at the next reconcile; then it is back.
    await api.deleteNamespacedResourceQuota({ namespace: kit.ns, name: 'refused' });
    await eventually(async () => assert.equal((await entry(pr1))?.message, undefined), { timeoutMs: 30_000 });
    await api.createNamespacedResourceQuota({ namespace: kit.ns, body: quota('refused', '1') });
    // A push: the build stops before applying any function.
    const before = await getCustom<FunctionResource>(customApi(kit.kc), ns1, 'functions', 'alpha');
    const head = await wc.commit(fn('alpha', 'v3-pr'), 'alpha v3', 'change-alpha');
    await deliver(pr1, 'synchronized', head);
    await eventually(async () => assert.match((await entry(pr1))?.message ?? '', new RegExp(`^cannot copy ResourceQuota ${kit.ns}/refused into the preview namespace ${ns1}: `)), { timeoutMs: 30_000 });
    assert.ok(kit.logs.some((l) => l.includes(`pull request #${pr1}: building the preview failed: cannot copy ResourceQuota ${kit.ns}/refused`)), 'a log line says which and where');
    const during = await getCustom<FunctionResource>(customApi(kit.kc), ns1, 'functions', 'alpha');
    assert.equal(during?.metadata?.generation, before?.metadata?.generation, 'alpha not applied while its quota is missing');
    assert.notEqual(during?.spec?.source?.revision, head);
    // The refusal lifted: the recorded delivery is built at the next reconcile, the copy first.
    await admission.deleteValidatingAdmissionPolicyBinding({ name });
    await admission.deleteValidatingAdmissionPolicy({ name });
    await eventually(
      async () => {
        const e = await entry(pr1);
        assert.equal(e?.head, head, JSON.stringify(e));
        assert.equal(e?.message, undefined);
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual((await api.readNamespacedResourceQuota({ namespace: ns1, name: 'refused' })).metadata?.labels, COPY_LABELS(kit.ns, pr1));
    assert.equal((await getCustom<FunctionResource>(customApi(kit.kc), ns1, 'functions', 'alpha'))?.spec?.source?.revision, head);
    await buildAndServe(ns1, 'alpha');
    await api.deleteNamespacedResourceQuota({ namespace: kit.ns, name: 'refused' });
    await eventually(async () => assert.equal(await api.readNamespacedResourceQuota({ namespace: ns1, name: 'refused' }).then(() => 200, (e: { code?: number }) => e.code), 404), { timeoutMs: 30_000 });
  });

  it('a second push rebuilds only what changed: beta is added, alpha untouched', async () => {
    const alphaBefore = (await previewFunctions(ns1)).find((f) => f.metadata?.name === 'alpha');
    const head = await wc.commit(fn('beta', 'v2-pr'), 'beta v2', 'change-alpha');
    assert.equal((await deliver(pr1, 'synchronized', head)).outcome, 'accepted');
    await eventually(
      async () => {
        const p = await entry(pr1);
        if (p?.head !== head) throw new Error(`head not planned yet: ${JSON.stringify(p)}`);
        assert.deepEqual(p.functions?.map((f) => [f.name, f.state]), [['alpha', 'built'], ['beta', 'built'], ['gamma', 'production']]);
      },
      { timeoutMs: 60_000 },
    );
    const fns = await previewFunctions(ns1);
    assert.deepEqual(fns.map((f) => f.metadata?.name).sort(), ['alpha', 'beta']);
    const alpha = fns.find((f) => f.metadata?.name === 'alpha');
    assert.equal(alpha?.metadata?.generation, alphaBefore?.metadata?.generation, 'alpha was not re-applied');
    assert.equal(alpha?.spec?.s3Key, alphaBefore?.spec?.s3Key);
    await buildAndServe(ns1, 'beta');
    assert.equal((await status(head, (s) => s.status === 'success', 'success after the second push')).description, '2 built, 1 from production');
  });

  it('schedules and env_from_secrets: left out by default; with schedules: true and secrets: inherit, the cron Trigger runs and the Secret is copied', async () => {
    await core(kit.kc).createNamespacedSecret({ namespace: kit.ns, body: { metadata: { name: 'db' }, stringData: { DB_PASSWORD: 'pw' } } });
    const yaml = 'runtime: nodejs20\nenv_from_secrets: [db]\nschedules: [{name: nightly, cron: "0 3 * * *"}]\n';
    const head = await wc.commit({ 'functions/alpha/function.yaml': yaml }, 'alpha: a schedule and a Secret', 'change-alpha');
    await deliver(pr1, 'synchronized', head);
    await eventually(async () => assert.equal((await entry(pr1))?.head, head), { timeoutMs: 90_000 });
    const alpha = () => getCustom<FunctionResource>(customApi(kit.kc), ns1, 'functions', 'alpha');
    assert.deepEqual((await alpha())?.spec?.envFromSecrets, []);
    assert.equal(await getCustom(customApi(kit.kc), ns1, 'triggers', 'alpha-cron-nightly'), undefined, 'no schedule in a preview by default');
    await assert.rejects(core(kit.kc).readNamespacedSecret({ namespace: ns1, name: 'db' }), /404|not found/i);
    await patchCustom(kit, 'functionrepositories', 'fns', [
      { op: 'replace', path: '/spec/previews/schedules', value: true },
      { op: 'replace', path: '/spec/previews/secrets', value: 'inherit' },
    ]);
    // Settings apply at the PR's next delivery.
    await deliver(pr1, 'synchronized');
    await eventually(async () => assert.deepEqual((await alpha())?.spec?.envFromSecrets, ['db']), { timeoutMs: 60_000 });
    // The Function is applied before its Triggers: wait for the Trigger too.
    await eventually(async () => assert.ok(await getCustom(customApi(kit.kc), ns1, 'triggers', 'alpha-cron-nightly'), 'the schedule with schedules: true'), { timeoutMs: 30_000 });
    const copied = await core(kit.kc).readNamespacedSecret({ namespace: ns1, name: 'db' });
    assert.equal(Buffer.from(copied.data?.DB_PASSWORD ?? '', 'base64').toString(), 'pw');
    await patchCustom(kit, 'functionrepositories', 'fns', [
      { op: 'replace', path: '/spec/previews/schedules', value: false },
      { op: 'replace', path: '/spec/previews/secrets', value: 'none' },
    ]);
  });

  it('a namespace of the preview name that is not a preview: refused with a status; another base branch or a bad number: ignored', async () => {
    await wc.git('checkout', '-q', 'main');
    await wc.git('checkout', '-q', '-b', 'squatted');
    const head = await wc.commit(fn('beta', 'v-squat'), 'beta squat', 'squatted');
    const number = await openPr('squatted');
    await core(kit.kc).createNamespace({ body: { metadata: { name: `${kit.ns}-pr-${number}` } } });
    await deliver(number, 'opened');
    assert.match((await status(head, (s) => s.status === 'failure', 'refused: namespace taken')).description, /exists and is not this repository's preview/);
    assert.equal(await entry(number), undefined);
    const pr = await api.call<Record<string, unknown>>('GET', `/repos/${repo.fullName}/pulls/${number}`);
    const other = readPullRequest('gitea', { action: 'synchronized', number, pull_request: { ...pr, base: { ...(pr.base as object), ref: 'release' } } });
    assert.ok(!('error' in other));
    assert.deepEqual(await previews.pullRequest(kit.ns, 'fns', other, 'test'), { outcome: 'ignored', message: `pull request #${number} targets release; this repository watches main` });
    const bad = readPullRequest('gitea', { action: 'opened', number: -1, pull_request: pr });
    assert.ok(!('error' in bad));
    assert.equal((await previews.pullRequest(kit.ns, 'fns', bad, 'test')).outcome, 'ignored');
    await api.call('PATCH', `/repos/${repo.fullName}/pulls/${number}`, { state: 'closed' });
    await core(kit.kc).deleteNamespace({ name: `${kit.ns}-pr-${number}` });
  });

  it('a head branch deleted before the leader reads it: nothing is built and nothing stays behind', async () => {
    await wc.git('checkout', '-q', 'main');
    await wc.git('checkout', '-q', '-b', 'short-lived');
    await wc.commit(fn('beta', 'v-gone'), 'beta gone', 'short-lived');
    const number = await openPr('short-lived');
    const pr = await api.call<Record<string, unknown>>('GET', `/repos/${repo.fullName}/pulls/${number}`);
    await api.deleteBranch(repo.fullName, 'short-lived');
    const event = readPullRequest('gitea', { action: 'opened', number, pull_request: pr });
    assert.ok(!('error' in event));
    assert.equal((await previews.pullRequest(kit.ns, 'fns', event, 'test')).outcome, 'accepted');
    await eventually(
      async () => {
        const r = await kit.getRepository('fns');
        assert.equal(r.metadata?.annotations?.[`preview.sless.kube5s.ru/pr-${number}`], undefined, 'the delivery is handled');
        assert.equal(r.status?.previews?.find((p) => p.number === number), undefined);
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(kit.logs.some((l) => l.includes(`pull request #${number}: branch short-lived does not exist`)), 'a log line says why');
    await assert.rejects(core(kit.kc).readNamespace({ name: `${kit.ns}-pr-${number}` }), /404|not found/i);
    await api.call('PATCH', `/repos/${repo.fullName}/pulls/${number}`, { state: 'closed' }).catch(() => undefined);
  });

  it('a pull request from a fork builds nothing, and its head gets a failure status saying so', async () => {
    const { head, number } = await api.forkPullRequest(repo, fn('alpha', 'v-fork'));
    const answer = await deliver(number, 'opened');
    assert.equal(answer.outcome, 'refused');
    const s = await status(head, (x) => x.status === 'failure', 'a failure status on the fork PR head');
    assert.match(s.description, /forks are not built/);
    assert.equal(await entry(number), undefined);
    await assert.rejects(core(kit.kc).readNamespace({ name: `${kit.ns}-pr-${number}` }), /404|not found/i);
  });

  let pr2: number;

  it('maxOpen 2: a second PR gets its preview, a third is refused with a status that says so', async () => {
    await wc.git('checkout', '-q', 'main');
    await wc.git('checkout', '-q', '-b', 'change-gamma');
    await wc.commit(fn('gamma', 'v2-pr'), 'gamma v2', 'change-gamma');
    pr2 = await openPr('change-gamma');
    assert.equal((await deliver(pr2, 'opened')).outcome, 'accepted');
    await eventually(async () => assert.equal((await entry(pr2))?.planned, true), { timeoutMs: 60_000 });
    await wc.git('checkout', '-q', 'main');
    await wc.git('checkout', '-q', '-b', 'third');
    const head3 = await wc.commit(fn('beta', 'v3'), 'beta v3', 'third');
    const pr3 = await openPr('third');
    const answer = await deliver(pr3, 'opened');
    assert.equal(answer.outcome, 'refused');
    assert.match(answer.message, /2 previews are open.*maxOpen 2/);
    assert.match((await status(head3, (s) => s.status === 'failure', 'refused at maxOpen')).description, /2 previews are open/);
  });

  it('closing a PR deletes its namespace, its status.previews entry and (a Job in the build namespace) its images', async () => {
    await api.call('PATCH', `/repos/${repo.fullName}/pulls/${pr2}`, { state: 'closed' });
    assert.equal((await deliver(pr2, 'closed')).outcome, 'accepted');
    await namespaceGone(`${kit.ns}-pr-${pr2}`);
    // Every function of the PR (one it leaves alone may have been built at an earlier push), never production's.
    assert.deepEqual(await imagesDeleted(pr2), previewRepositories(pr2, ['alpha', 'beta', 'gamma']));
    await eventually(async () => assert.equal(await entry(pr2), undefined), { timeoutMs: 30_000 });
    assert.ok(await entry(pr1), 'the other preview stays');
  });

  it('ttl: a preview older than spec.previews.ttl since its last push is removed', async () => {
    await setTtl('2s');
    await namespaceGone(ns1);
    assert.deepEqual(await imagesDeleted(pr1), previewRepositories(pr1, ['alpha', 'beta', 'gamma']));
    await eventually(async () => assert.deepEqual((await kit.getRepository('fns')).status?.previews, []), { timeoutMs: 30_000 });
    await setTtl('1h');
  });

  it('deleting the FunctionRepository removes its preview namespaces (its finalizer)', async () => {
    // A new PR (a reopened one would first wait for its closed namespace to finish terminating).
    await wc.git('checkout', '-q', 'main');
    await wc.git('checkout', '-q', '-b', 'last');
    await wc.commit(fn('gamma', 'v-last'), 'gamma last', 'last');
    const pr = await openPr('last');
    assert.equal((await deliver(pr, 'opened')).outcome, 'accepted');
    const ns2 = `${kit.ns}-pr-${pr}`;
    await eventually(async () => assert.equal((await entry(pr))?.planned, true), { timeoutMs: 90_000 });
    assert.ok((await kit.getRepository('fns')).metadata?.finalizers?.includes('sless.kube5s.ru/cleanup'));
    await customApi(kit.kc).deleteNamespacedCustomObject({ group: 'sless.kube5s.ru', version: 'v1alpha1', namespace: kit.ns, plural: 'functionrepositories', name: 'fns' });
    await namespaceGone(ns2);
    assert.ok((await imagesDeleted(pr)).includes(`${ns2}-gamma`));
    await eventually(async () => assert.equal(await getCustom(customApi(kit.kc), kit.ns, 'functionrepositories', 'fns'), undefined), { timeoutMs: 30_000 });
  });
});
