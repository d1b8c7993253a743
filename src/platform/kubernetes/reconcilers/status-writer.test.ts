import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { equalish, writeStatus, type StatusMemo } from './status-writer.ts';

describe('writeStatus', () => {
  it('treats a status the API server answered with its own key order as unchanged', () => {
    const ours = [{ name: 'alpha', path: 'functions/alpha', codeHash: 'sha256:1' }];
    const theirs = [{ codeHash: 'sha256:1', name: 'alpha', path: 'functions/alpha' }];
    assert.equal(equalish(theirs, ours), true);
    assert.equal(equalish('', undefined), true);
    assert.equal(equalish([{ name: 'a' }], [{ name: 'b' }]), false);
  });

  it('sends nothing when the object already says it, once when it does not', async () => {
    const sent: object[] = [];
    const ctx = {
      kube: { patchStatus: async (_k: string, _n: string, _m: string, body: object) => void sent.push(body) },
      now: () => new Date('2026-12-01T00:00:00Z'),
      statusMemo: new Map() as StatusMemo,
    } as unknown as Parameters<typeof writeStatus>[0];
    const outcome = { kind: 'ready', reason: 'Synced', message: 'ok' } as const;
    const obj = {
      metadata: { name: 'r', namespace: 'ns', generation: 1, uid: 'u' },
      status: {
        observedGeneration: 1,
        conditions: [{ type: 'Ready', status: 'True' as const, reason: 'Synced', message: 'ok', lastTransitionTime: '2026-11-30T00:00:00Z', observedGeneration: 1 }],
        functions: [{ codeHash: 'h', name: 'a', path: 'p' }],
      },
    };
    await writeStatus(ctx, 'FunctionRepository', obj, outcome, { functions: [{ name: 'a', path: 'p', codeHash: 'h' }] });
    assert.equal(sent.length, 0);
    await writeStatus(ctx, 'FunctionRepository', obj, outcome, { functions: [{ name: 'a', path: 'p', codeHash: 'h2' }] });
    await writeStatus(ctx, 'FunctionRepository', obj, outcome, { functions: [{ name: 'a', path: 'p', codeHash: 'h2' }] });
    assert.equal(sent.length, 1, 'the memo holds the second one back while the cache lags');
  });

  it('while the cache lags, a body that differs from the one just written only by cleared fields is not sent again', async () => {
    const sent: object[] = [];
    const ctx = {
      kube: { patchStatus: async (_k: string, _n: string, _m: string, body: object) => void sent.push(body) },
      now: () => new Date('2026-12-01T00:00:00Z'),
      statusMemo: new Map() as StatusMemo,
    } as unknown as Parameters<typeof writeStatus>[0];
    const building = { kind: 'progressing', reason: 'Building', message: 'building' } as const;
    const fresh = { metadata: { name: 'f', namespace: 'ns', generation: 1, uid: 'u' } };
    await writeStatus(ctx, 'Function', fresh, building, { phase: 'Building', message: 'building', failedBuildKey: '' });
    await writeStatus(ctx, 'Function', fresh, building, { phase: 'Building', message: 'building' });
    assert.equal(sent.length, 1);
  });

  it('remembers a digest of the body it wrote, not the body (a repository status of 1,000 functions)', async () => {
    const memo: StatusMemo = new Map();
    const ctx = {
      kube: { patchStatus: async () => undefined },
      now: () => new Date('2026-12-01T00:00:00Z'),
      statusMemo: memo,
    } as unknown as Parameters<typeof writeStatus>[0];
    const functions = Array.from({ length: 1_000 }, (_, i) => ({ name: `fn-${i}`, path: `functions/fn-${i}`, codeHash: `sha256:${'0'.repeat(64)}` }));
    const repo = { metadata: { name: 'r', namespace: 'ns', generation: 1, uid: 'u' } };
    await writeStatus(ctx, 'FunctionRepository', repo, { kind: 'ready', reason: 'Synced', message: 'ok' }, { functions });
    const [entry] = [...memo.values()];
    assert.ok(entry && entry.fingerprint.length <= 64, `memo entry holds ${entry?.fingerprint.length} characters`);
  });
});
