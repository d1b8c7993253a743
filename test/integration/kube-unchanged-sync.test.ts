// Issue 15 (one push among 100 busy repositories): a requested sync that finds the revision it applied
// last stops right after ls-remote (reconcilers/unchanged-sync.ts), and what must still sync in full
// does: a push, a Function edited by hand, a spec change of the repository.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/kube.ts';
import { nodeFunction, patchCustom, setupKit, type Kit } from './kube-controller-kit.ts';

const UNCHANGED = 'sless_repository_syncs_unchanged_total';

describe('a no-change sync stops after ls-remote', () => {
  let kit: Kit;
  let requests = 0;
  const unchanged = async () => (await kit.registry.getSingleMetric(UNCHANGED)?.get())?.values[0]?.value ?? 0;
  const syncSeconds = async () =>
    ((await kit.registry.getSingleMetric('sless_sync_duration_seconds')?.get())?.values ?? [])
      .filter((v) => (v as { metricName?: string }).metricName === 'sless_sync_duration_seconds_sum')
      .reduce((a, v) => a + v.value, 0);
  /** Asks for a sync as a webhook does; resolves once the controller has answered this request. */
  const requestSync = async () => {
    const at = new Date(Date.now() + ++requests).toISOString();
    await kit.controller!.requestSync(kit.ns, 'same', new Date(at));
    await eventually(async () => assert.equal((await kit.getRepository('same')).status?.lastHandledRequestedAt, at), { timeoutMs: 60_000, intervalMs: 50 });
  };

  before(async () => {
    kit = await setupKit('kube-unchanged');
    // With a schedule: its Trigger is owned too and must not look changed between syncs.
    await kit.clone.write({ ...nodeFunction('same', { yaml: 'schedules:\n  - name: nightly\n    cron: "0 3 * * *"\n' }) });
    await kit.clone.commitAndPush('one function');
    await kit.startController();
    await kit.createRepository('same', { interval: '10m' });
    await eventually(async () => assert.ok((await kit.getFunction('same'))?.spec?.codeHash), { timeoutMs: 60_000 });
    // The first full sync made the Function; the next one sees it in the cache and leaves the memo.
    await new Promise((r) => setTimeout(r, 1_000));
    await requestSync();
  });
  after(() => kit?.dispose());

  it('a requested sync with the same remote head is answered from the last full sync', async (t) => {
    const before = await unchanged();
    const ran = await syncSeconds();
    await requestSync();
    assert.equal(await unchanged(), before + 1, `${UNCHANGED} counts the sync that stopped after ls-remote`);
    t.diagnostic(`that sync ran ${(((await syncSeconds()) - ran) * 1000).toFixed(0)} ms`);
    assert.equal((await kit.getRepository('same')).status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  });

  it('a Function edited by hand is put back by the next requested sync (its generation changed)', async () => {
    await patchCustom(kit, 'functions', 'same', [{ op: 'replace', path: '/spec/memoryMB', value: 512 }]);
    await eventually(async () => assert.equal((await kit.getFunction('same'))?.spec?.memoryMB, 512));
    await new Promise((r) => setTimeout(r, 500)); // the controller's cache sees the edit
    await requestSync();
    await eventually(async () => assert.equal((await kit.getFunction('same'))?.spec?.memoryMB, 128), { timeoutMs: 30_000 });
  });

  it('a push is applied: the remote head is not the synced revision', async () => {
    const old = (await kit.getFunction('same'))?.spec?.codeHash;
    await kit.clone.write(nodeFunction('same', { body: 'exports.handle = async () => 2;\n' }));
    await kit.clone.commitAndPush('change');
    await requestSync();
    await eventually(async () => assert.notEqual((await kit.getFunction('same'))?.spec?.codeHash, old), { timeoutMs: 30_000 });
  });

  it('a spec change of the repository syncs in full: a path with no functions is refused, nothing pruned', async () => {
    await patchCustom(kit, 'functionrepositories', 'same', [{ op: 'add', path: '/spec/path', value: 'nowhere' }]);
    await eventually(
      async () => {
        const repo = await kit.getRepository('same');
        assert.equal(repo.status?.observedGeneration, repo.metadata?.generation);
        assert.equal(repo.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False', JSON.stringify(repo.status?.conditions));
      },
      { timeoutMs: 30_000 },
    );
    assert.ok(await kit.getFunction('same'), 'nothing pruned');
  });
});
