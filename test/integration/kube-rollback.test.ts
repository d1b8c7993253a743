// Revisions, rollback and pinning on Kubernetes (issue 33, docs/rollback.md) against the real API
// server: each version that went live is a revision in status.revisions; a rollback through the
// platform (/v1's side) writes the pin annotation and the controller serves the old image at once with
// no build Job (Pinned=True); the pin survives a controller restart and a new push (which builds but
// does not go live); the undo serves git's head from the image built meanwhile, again with no build.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { PlatformError } from '../../src/platform/types.ts';
import { KubernetesPlatform } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import { apps, conditionOf, DIGEST_A, DIGEST_B, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';
import { platformSettings, testS3Store } from './kube-platform-kit.ts';

const DIGEST_C = `sha256:${'c'.repeat(64)}`;

describe('kube: revisions, rollback and pinning', () => {
  let kit: Kit;
  let platform: KubernetesPlatform;
  const commits: string[] = [];

  /** The image the function's Deployment runs. */
  const deployedImage = async () => (await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'flip' })).spec?.template.spec?.containers[0]?.image;
  const deployedEnv = async () =>
    Object.fromEntries(((await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'flip' })).spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));

  /** Finishes the one unfinished build of `flip` with `digest`, serves the rollout and waits for Ready. */
  async function build(digest: string, count: number): Promise<void> {
    const job = await eventually(
      async () => {
        const jobs = await kit.buildJobs('flip');
        assert.equal(jobs.length, count);
        const running = jobs.find((j) => !(j.status?.conditions ?? []).some((c) => c.status === 'True'));
        assert.ok(running);
        return running;
      },
      { timeoutMs: 60_000 },
    );
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: digest });
  }

  async function push(version: number, env: Record<string, string>, sync = true): Promise<void> {
    await kit.clone.write(nodeFunction('flip', { env, body: `exports.handle = async () => ({ version: ${version} });\n` }));
    commits.push(await kit.clone.commitAndPush(`version ${version}`));
    if (sync) await kit.controller?.requestSync(kit.ns, 'repo');
  }

  before(async () => {
    kit = await setupKit('kube-rollback');
    platform = new KubernetesPlatform({ kubeConfig: kit.kc, store: testS3Store(), settings: platformSettings(testS3Store()) });
    await kit.startController();
    await push(1, { GREETING: 'one' }, false);
    await kit.createRepository('repo');
  });
  after(async () => {
    await platform?.close();
    await kit?.dispose();
  });

  it('each version that went live is a revision: image, commit, live_from / live_until', async () => {
    await build(DIGEST_A, 1);
    await kit.serve('flip');
    await eventually(async () => assert.equal((await platform.listRevisions(kit.ns, 'flip')).length, 1), { timeoutMs: 30_000 });
    await push(2, { GREETING: 'two' });
    await build(DIGEST_B, 2);
    await kit.serve('flip');
    const revisions = await eventually(
      async () => {
        const revs = await platform.listRevisions(kit.ns, 'flip');
        assert.equal(revs.length, 2);
        return revs;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(
      revisions.map((r) => [r.revision, r.image.endsWith(DIGEST_A) || r.image.endsWith(DIGEST_B) ? r.image.slice(-64, -60) : r.image, r.commit, r.liveUntil === undefined]),
      [
        [1, 'aaaa', commits[0], false],
        [2, 'bbbb', commits[1], true],
      ],
    );
    assert.equal((await platform.getFunction(kit.ns, 'flip')).pinned, undefined);
  });

  it('a rollback serves the previous revision with no build, pinned: Pinned=True says so', async () => {
    const fn = await platform.rollback(kit.ns, 'flip');
    assert.equal(fn.pinned?.revision, 1);
    await eventually(async () => assert.ok((await deployedImage())?.endsWith(DIGEST_A)), { timeoutMs: 30_000 });
    assert.equal((await deployedEnv()).GREETING, 'one');
    await kit.serve('flip');
    const pinned = await eventually(
      async () => {
        const f = await kit.getFunction('flip');
        assert.equal(conditionOf(f, 'Pinned')?.status, 'True');
        assert.equal(conditionOf(f)?.reason, 'Pinned');
        return f;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(conditionOf(pinned, 'Pinned')?.message, `serving revision 1 (commit ${commits[0]?.slice(0, 7)}); git is ahead: push a fix or undo the rollback`);
    assert.equal((await kit.buildJobs('flip')).length, 2, 'no build for a rollback');
    const live = (await platform.listRevisions(kit.ns, 'flip')).find((r) => r.liveUntil === undefined);
    assert.equal(live?.revision, 1);
  });

  it('the pin survives a controller restart and a push: the new version builds but does not go live', async () => {
    await kit.stopController();
    await kit.startController();
    await push(3, { GREETING: 'three' });
    await build(DIGEST_C, 3);
    const f = await eventually(
      async () => {
        const fn = await kit.getFunction('flip');
        assert.ok(fn?.status?.imageRef?.endsWith(DIGEST_C), fn?.status?.imageRef);
        return fn;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(f?.spec?.source?.revision, commits[2]);
    assert.equal(conditionOf(f, 'Pinned')?.status, 'True');
    assert.equal(f?.metadata?.annotations?.['sless.kube5s.ru/pinned'] !== undefined, true, 'the sync kept the pin');
    assert.ok((await deployedImage())?.endsWith(DIGEST_A));
    assert.equal((await deployedEnv()).GREETING, 'one');
    assert.equal((await platform.getFunction(kit.ns, 'flip')).pinned?.revision, 1);
  });

  it('the undo serves git’s head from the image built meanwhile, with no build; Pinned is gone', async () => {
    const fn = await platform.undoRollback(kit.ns, 'flip');
    assert.equal(fn.pinned, undefined);
    await eventually(async () => assert.ok((await deployedImage())?.endsWith(DIGEST_C)), { timeoutMs: 30_000 });
    assert.equal((await deployedEnv()).GREETING, 'three');
    await kit.serve('flip');
    const revisions = await eventually(
      async () => {
        const revs = await platform.listRevisions(kit.ns, 'flip');
        assert.equal(revs.find((r) => r.liveUntil === undefined)?.revision, 3);
        return revs;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(
      revisions.map((r) => r.revision),
      [1, 2, 3],
    );
    assert.equal(conditionOf(await kit.getFunction('flip'), 'Pinned'), undefined);
    assert.equal((await kit.buildJobs('flip')).length, 3, 'no build for the undo');
  });

  it('a named revision that is not kept is refused with a one-line 400', async () => {
    await assert.rejects(platform.rollback(kit.ns, 'flip', 9), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.equal(err.code, 'invalid');
      assert.equal(err.message, 'function flip has no revision 9; its kept revisions are 1, 2, 3');
      return true;
    });
  });
});
