import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pruneOwned, type PrunedObject } from './sync-apply.ts';

const obj = (name: string, fn = name, deleting = false) => ({
  apiVersion: 'sless.kube5s.ru/v1alpha1',
  metadata: { name, labels: { 'sless.kube5s.ru/function': fn }, ...(deleting ? { deletionTimestamp: '2026-12-06T10:00:00Z' } : {}) },
});

describe('pruning what a sync no longer wants', () => {
  const owned = [
    ['Function', [obj('api'), obj('web'), obj('old'), obj('going', 'going', true)]],
    ['Trigger', [obj('api-http', 'api'), obj('old-http', 'old'), obj('broken-http', 'broken')]],
  ] as const;
  const wanted = new Set(['Function/api', 'Trigger/api-http', 'Function/web']);
  const keep = new Set(['broken']);

  it('answers what it removed: neither wanted, nor of a kept function, nor being deleted already', async () => {
    const deleted: string[] = [];
    const kube = { delete: async (o: { kind?: string; metadata?: { name?: string; namespace?: string } }) => void deleted.push(`${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`) };
    assert.deepEqual(await pruneOwned(kube, 'team', owned, wanted, keep), [
      { kind: 'Function', name: 'old' },
      { kind: 'Trigger', name: 'old-http' },
    ]);
    assert.deepEqual(deleted, ['Function/team/old', 'Trigger/team/old-http']);
  });

  it('a delete that fails: the list passed in holds what went before it (their images must still go)', async () => {
    const kube = {
      delete: async (o: { kind?: string }) => {
        if (o.kind === 'Trigger') throw new Error('delete Trigger team/old-http failed: 500');
      },
    };
    const pruned: PrunedObject[] = [];
    await assert.rejects(pruneOwned(kube, 'team', owned, wanted, keep, pruned), /old-http failed/);
    assert.deepEqual(pruned, [{ kind: 'Function', name: 'old' }]);
  });
});
