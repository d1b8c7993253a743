// The controller's commit statuses against a real apiserver and a real Gitea 1.27.3 (services kube,
// s3, git, gitea): a private Gitea repository synced with a token from the repository's Secret,
// spec.commitStatus on, builds played by the harness. Statuses are read back through Gitea's API.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { GiteaApi, giteaFromEnv, WorkingCopy, type CommitStatusRecord } from '../helpers/gitea-api.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobFailed, markJobSucceeded } from '../helpers/kube-harness.ts';
import { apps, core, DIGEST_A, nodeFunction, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';

const env = giteaFromEnv();
if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=kube,s3,git,gitea (built by .ci/install.d/40-gitea.sh)');
const api = new GiteaApi(env);

describe('kube controller: commit statuses on the synced revision (spec.commitStatus)', () => {
  let kit: Kit;
  let wc: WorkingCopy;
  let repo: { cloneUrl: string; fullName: string };

  const statuses = (sha: string, done: (s: Map<string, CommitStatusRecord>) => boolean, what: string) =>
    eventually(
      async () => {
        const s = await api.latestStatuses(repo.fullName, sha);
        if (!done(s)) throw new Error(`${what}: statuses so far ${JSON.stringify([...s.values()].map((x) => [x.context, x.status, x.description]))}`);
        return s;
      },
      { timeoutMs: 60_000 },
    );
  const buildJob = (fn: string) =>
    eventually(
      async () => {
        const jobs = (await kit.buildJobs(fn)).filter((j) => !j.status?.succeeded && !j.status?.failed);
        if (jobs.length === 0) throw new Error(`no running build Job for ${fn} yet`);
        return jobs[0]!;
      },
      { timeoutMs: 30_000 },
    );
  const sync = () => kit.controller!.requestSync(kit.ns, 'site');

  before(async () => {
    repo = await api.createRepo(`kube-cs-${randomBytes(4).toString('hex')}`, { private: true });
    // Gitea listens on loopback: allowed as an operator would with SLESS_GIT_ALLOWED_HOSTS.
    kit = await setupKit('kube-cs', sharedS3(), { git: { allowedHosts: [new URL(repo.cloneUrl).host] }, publicBaseUrl: 'https://fn.example.com' });
    wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
    const files = nodeFunction('hello');
    await wc.commit(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, String(v)])), 'hello');
    const token = await api.createToken(`kube-cs-${randomBytes(3).toString('hex')}`, ['write:repository']);
    await core(kit.kc).createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'site-git' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token, webhookSecret: 'w' } },
    });
    await kit.startController();
    await kit.createRepository('site', { url: repo.cloneUrl, secretRef: { name: 'site-git' }, commitStatus: {} });
  });
  after(async () => {
    await kit?.dispose();
    await wc?.remove();
  });

  it('pending while the build runs, success once the function serves the revision', async () => {
    const sha = await wc.git('rev-parse', 'HEAD');
    const pending = await statuses(sha, (s) => s.get('sless')?.status === 'pending', 'pending during the build');
    assert.match(pending.get('sless')?.description ?? '', /^hello: /);
    const job = await buildJob('hello');
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serve('hello');
    const done = await statuses(sha, (s) => s.get('sless')?.status === 'success', 'success once serving');
    assert.match(done.get('sless')?.description ?? '', /^1 function serves [0-9a-f]{12}$/);
    assert.equal(done.has('sless/hello'), false);
  });

  it('a broken manifest: failure with file:line on sless and sless/<function>', async () => {
    const sha = await wc.commit({ 'functions/hello/function.yaml': 'name: hello\nruntime: nodejs20\ntimeout_sec: forever\n' }, 'break hello');
    await sync();
    const s = await statuses(sha, (m) => m.get('sless')?.status === 'failure' && m.has('sless/hello'), 'failure on the broken manifest');
    assert.match(s.get('sless')?.description ?? '', /^hello: functions\/hello\/function\.yaml:3: timeout_sec: /);
    assert.match(s.get('sless/hello')?.description ?? '', /^functions\/hello\/function\.yaml:3: timeout_sec: /);
    assert.equal(s.get('sless/hello')?.target_url, `https://fn.example.com/funcs/${kit.ns}/source/hello`);
  });

  it("a failed build: failure with the build's failure; the previous version keeps its Deployment", async () => {
    const files = nodeFunction('hello', { body: "exports.handle = async () => ({ v: 2 });\n" });
    const sha = await wc.commit(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, String(v)])), 'hello v2');
    await sync();
    const job = await buildJob('hello');
    await statuses(sha, (m) => m.get('sless')?.status === 'pending', 'pending during the second build');
    await markJobFailed(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: 'error building image: npm ERR! missing script' });
    const s = await statuses(sha, (m) => m.get('sless')?.status === 'failure' && m.get('sless/hello')?.status === 'failure', 'failure after the failed build');
    assert.match(s.get('sless/hello')?.description ?? '', /^build failed \(Job /);
    assert.match(s.get('sless')?.description ?? '', /^hello: build failed \(Job /);
    const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
    assert.match(dep.spec?.template.spec?.containers[0]?.image ?? '', new RegExp(`@${DIGEST_A}$`));
  });
});
