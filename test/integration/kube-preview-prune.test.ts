// A function pruned from a Kubernetes preview has its images deleted at once (docs/previews.md
// "Kubernetes", "Removal"), on the real kube-apiserver and a real Gitea (services kube, s3, git, gitea):
// a PR adds two functions at one push and drops them at a later one. The pruned function's build is
// stopped and the Job of `sless-build-tools delete` is started for its repositories alone (no kubelet
// here: the test reads the Job the controller creates); a repository another namespace's Function maps to
// is kept. Builds are played by the harness. The tests run in order and share one repository and controller.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import type { PlatformPreviews } from '../../src/platform/types.ts';
import type { FunctionResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { WorkingCopy } from '../helpers/gitea-api.ts';
import { eventually } from '../helpers/kube.ts';
import { batchApi, core, customApi, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';
import { platformSettings, testS3Store } from './kube-platform-kit.ts';
import { deletedRepositories, deliverPullRequest, fn, openPullRequest, previewImageJobs, previewRepositories as repositoriesIn, previewsGitea } from './kube-previews-kit.ts';

const api = previewsGitea();
const gone = (name: string) => ({ [`functions/${name}/function.yaml`]: null, [`functions/${name}/handler.js`]: null });

describe('previews on Kubernetes: a function pruned from a preview has its images deleted at once', () => {
  let kit: Kit;
  let wc: WorkingCopy;
  let repo: { cloneUrl: string; fullName: string };
  let previews: PlatformPreviews;
  let pr: number;
  let previewNs: string;

  const deliver = async (action: string, head?: string) =>
    assert.equal((await deliverPullRequest({ api, fullName: repo.fullName, previews, namespace: kit.ns }, pr, action, head)).outcome, 'accepted');
  const entry = async () => (await kit.getRepository('fns')).status?.previews?.find((p) => p.number === pr);
  /** The leader has planned (and pruned) `head`: its entry says so. */
  const planned = (head: string) =>
    eventually(
      async () => {
        const e = await entry();
        if (!e?.planned || e.head !== head) throw new Error(`${head} not planned yet: ${JSON.stringify(e)}`);
        return e;
      },
      { timeoutMs: 60_000 },
    );
  const previewFunctions = async () =>
    (((await customApi(kit.kc).listNamespacedCustomObject({ group: 'sless.kube5s.ru', version: 'v1alpha1', namespace: previewNs, plural: 'functions' })) as { items: FunctionResource[] }).items)
      .map((f) => f.metadata?.name)
      .sort();
  /** Every Job deleting images of the preview (the removal's and each prune's). */
  const imageJobs = () => previewImageJobs(kit.kc, kit.buildNs, kit.ns, pr);
  const repositoriesOf = (job: Parameters<typeof deletedRepositories>[0]) => deletedRepositories(job, kit.ns);
  const previewRepositories = (names: string[]) => repositoriesIn(previewNs, names);
  const buildJobs = async (name: string) =>
    (await batchApi(kit.kc).listNamespacedJob({ namespace: kit.buildNs, labelSelector: `sless.kube5s.ru/component=build,sless.kube5s.ru/function-namespace=${previewNs},sless.kube5s.ru/function=${name}` })).items;

  before(async () => {
    repo = await api.createRepo(`kube-preview-prune-${randomBytes(4).toString('hex')}`, { private: true });
    kit = await setupKit('kube-preview-prune', sharedS3(), {
      git: { allowedHosts: [new URL(repo.cloneUrl).host] },
      publicBaseUrl: 'https://fn.example.com',
      systemNamespace: 'sless-system',
      tenantBinding: { serviceAccount: 'sless-controller', namespace: 'sless-system' },
    });
    wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
    await wc.commit({ ...fn('alpha', 'v1'), ...fn('beta', 'v1') }, 'two functions', 'main');
    const token = await api.createToken(`kube-preview-prune-${randomBytes(3).toString('hex')}`, ['write:repository']);
    await core(kit.kc).createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'fns-git' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token, webhookSecret: 'w' } },
    });
    await kit.startController(undefined, { watchAll: true });
    const store = testS3Store();
    previews = new KubernetesPlatform({ kubeConfig: kit.kc, store, settings: platformSettings(store) }).previews;
    await kit.createRepository('fns', { url: repo.cloneUrl, path: 'functions', interval: '5s', secretRef: { name: 'fns-git' }, previews: { enabled: true } });
    await eventually(async () => assert.equal((await kit.listFunctions()).length, 2), { timeoutMs: 60_000 });
  });
  after(async () => {
    await kit?.dispose();
    await wc?.remove();
  });

  it('pushes that prune nothing start no images Job: a PR adding delta and gamma, then changing alpha', async () => {
    await wc.git('checkout', '-q', '-b', 'add-two');
    const head1 = await wc.commit({ ...fn('alpha', 'v2'), ...fn('delta', 'v1'), ...fn('gamma', 'v1') }, 'alpha v2, delta, gamma', 'add-two');
    pr = await openPullRequest(api, repo.fullName, 'add-two');
    previewNs = `${kit.ns}-pr-${pr}`;
    await deliver('opened', head1);
    await planned(head1);
    assert.deepEqual(await previewFunctions(), ['alpha', 'delta', 'gamma']);
    const head2 = await wc.commit(fn('alpha', 'v3'), 'alpha v3', 'add-two');
    await deliver('synchronized', head2);
    await planned(head2);
    assert.deepEqual(await previewFunctions(), ['alpha', 'delta', 'gamma']);
    assert.deepEqual(await imageJobs(), [], 'no Job deletes images while the preview prunes nothing');
  });

  it("a push dropping delta and gamma: delta's build is stopped and one Job deletes delta's repositories alone; gamma's, which a Function of the base namespace maps to as well, stay", async () => {
    // Namespace <ns>, function pr-<N>-gamma: image repository <ns>-pr-<N>-gamma, the same as the preview's gamma.
    await customApi(kit.kc).createNamespacedCustomObject({
      group: 'sless.kube5s.ru',
      version: 'v1alpha1',
      namespace: kit.ns,
      plural: 'functions',
      body: { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Function', metadata: { name: `pr-${pr}-gamma` }, spec: { runtime: 'nodejs20' } },
    });
    const deltaBuilds = await eventually(
      async () => {
        const jobs = await buildJobs('delta');
        if (jobs.length === 0) throw new Error('no build Job of delta yet');
        return jobs;
      },
      { timeoutMs: 30_000 },
    );
    const alphaBuilds = (await buildJobs('alpha')).map((j) => j.metadata?.name).sort();
    assert.ok(alphaBuilds.length > 0);
    const head3 = await wc.commit({ ...gone('delta'), ...gone('gamma') }, 'drop delta and gamma', 'add-two');
    await deliver('synchronized', head3);
    const e = await planned(head3);
    assert.deepEqual(e.functions?.map((f) => f.name), ['alpha', 'beta']);
    await eventually(async () => assert.deepEqual(await previewFunctions(), ['alpha']), { timeoutMs: 30_000 });
    const jobs = await imageJobs();
    assert.equal(jobs.length, 1, `one Job for the prune: ${jobs.map((j) => j.metadata?.name).join(', ')}`);
    assert.deepEqual(repositoriesOf(jobs[0]), previewRepositories(['delta']));
    assert.ok(!deltaBuilds.some((j) => j.metadata?.deletionTimestamp), 'delta was building before the push');
    await eventually(async () => assert.deepEqual(await buildJobs('delta'), []), { timeoutMs: 30_000 });
    assert.deepEqual((await buildJobs('alpha')).map((j) => j.metadata?.name).sort(), alphaBuilds, "alpha's builds go on");
    assert.ok(kit.logs.some((l) => l.includes(previewNs) && l.includes('gamma kept')), 'a log line says gamma’s images are kept, and why');
    // The builds are stopped by the prune or, first, by the pruned Functions' finalizers: either way before the Job is created.
    // The Job is seen through the API server before the controller's create has answered and been logged.
    await eventually(() => {
      const said = kit.logs.find((l) => l.includes(`the images of delta, gamma, pruned from preview ${previewNs} (pull request #${pr}): deleting 3 repositories' tags`));
      assert.match(said ?? '', /\(Job [^ ]+\/images-[^ ;]+; [0-2] build Job\(s\) stopped\)$/);
    });
  });

  it('delta added again builds again; closing the PR starts the removal’s Job under its own name', async () => {
    const [pruneJob] = await imageJobs();
    const head4 = await wc.commit(fn('delta', 'v1'), 'delta again', 'add-two');
    await deliver('synchronized', head4);
    await planned(head4);
    await eventually(async () => assert.equal((await buildJobs('delta')).length, 1, 'a build Job of delta again'), { timeoutMs: 30_000 });
    assert.equal((await imageJobs()).length, 1, 'no prune: nothing was dropped');
    await api.call('PATCH', `/repos/${repo.fullName}/pulls/${pr}`, { state: 'closed' });
    await deliver('closed');
    const removal = await eventually(
      async () => {
        const others = (await imageJobs()).filter((j) => j.metadata?.name !== pruneJob?.metadata?.name);
        if (others.length !== 1) throw new Error(`no removal Job yet: ${others.length}`);
        return others[0];
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(repositoriesOf(removal), previewRepositories(['alpha', 'beta', 'delta']));
    assert.deepEqual(repositoriesOf((await imageJobs()).find((j) => j.metadata?.name === pruneJob?.metadata?.name)), previewRepositories(['delta']), 'the prune’s Job is left as it was');
  });
});
