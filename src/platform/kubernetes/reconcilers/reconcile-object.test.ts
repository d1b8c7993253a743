// The reconciler skeleton as a specification, with no API server: what reaches the API (finalizer
// patches, status patches) for each state of an object and each way its steps end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FINALIZER } from '../objects/meta.ts';
import type { Condition, Metadata } from '../objects/resources.ts';
import { StalledError } from '../stalled-error.ts';
import { reconcileObject, type Reconciled, type Reconciler } from './reconcile-object.ts';
import type { StatusMemo } from './status-writer.ts';
import type { SlessReason } from '../../reasons.ts';

interface Thing {
  metadata?: Metadata;
  spec?: { suspend?: boolean };
  status?: { conditions?: Condition[]; observedGeneration?: number; note?: string };
}

const T0 = '2026-12-01T00:00:00.000Z';
const READY: Condition = { type: 'Ready', status: 'True', reason: 'Deployed', message: 'all good', lastTransitionTime: T0, observedGeneration: 1 };

function harness(obj: Thing | undefined, steps: Reconciler<Thing, { note?: string }, SlessReason>['steps'], extra: Partial<Reconciler<Thing, { note?: string }, SlessReason>> = {}) {
  const calls: string[] = [];
  const patches: Array<{ kind: string; body: { conditions: Condition[]; observedGeneration?: number; note?: string } }> = [];
  const ctx = {
    kube: {
      mergePatch: async (_o: unknown, patch: unknown) => {
        calls.push(`mergePatch ${JSON.stringify(patch)}`);
        return 'patched' as const;
      },
      patchStatus: async (kind: string, _ns: string, _name: string, body: never) => void patches.push({ kind, body }),
    },
    now: () => new Date('2026-12-01T01:00:00Z'),
    statusMemo: new Map() as StatusMemo,
  } as unknown as Parameters<typeof reconcileObject>[0];
  const reconciler: Reconciler<Thing, { note?: string }, SlessReason> = {
    kind: 'Function',
    get: () => obj,
    gone: (key) => void calls.push(`gone ${key}`),
    finalize: async () => void calls.push('finalize'),
    retryReason: () => 'ReconcileError',
    steps,
    ...extra,
  };
  return { calls, patches, run: () => reconcileObject(ctx, reconciler, 'ns/thing') };
}

const live = (over: Partial<Thing> = {}): Thing => ({ metadata: { name: 'thing', namespace: 'ns', generation: 1, uid: 'u' }, spec: {}, ...over });
const ready = async (): Promise<Reconciled<{ note?: string }>> => ({ outcome: { kind: 'ready', reason: 'Deployed', message: 'all good' }, status: { note: 'n' } });

describe('reconcileObject', () => {
  it('writes the outcome of the steps once, with their status fields and the summarized conditions', async () => {
    const h = harness(live(), ready);
    assert.equal(await h.run(), undefined);
    assert.equal(h.patches.length, 1);
    assert.equal(h.patches[0]?.body.note, 'n');
    assert.deepEqual(h.patches[0]?.body.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=True/Deployed']);
  });

  it('forgets an object that is gone and runs no steps', async () => {
    const h = harness(undefined, () => assert.fail('no steps for a missing object'));
    await h.run();
    assert.deepEqual(h.calls, ['gone ns/thing']);
    assert.equal(h.patches.length, 0);
  });

  it('finalizes an object being deleted only when it carries our finalizer', async () => {
    const deleting = (finalizers: string[]) => live({ metadata: { name: 'thing', namespace: 'ns', deletionTimestamp: T0, finalizers } });
    const mine = harness(deleting([FINALIZER]), () => assert.fail('no steps while deleting'));
    await mine.run();
    assert.deepEqual(mine.calls, ['gone ns/thing', 'finalize']);
    const foreign = harness(deleting(['someone.else/keep']), () => assert.fail('no steps while deleting'));
    await foreign.run();
    assert.deepEqual(foreign.calls, ['gone ns/thing']);
  });

  it('adds the finalizer before the steps when the reconciler wants one, and only then', async () => {
    const wants = harness(live(), ready, { wantsFinalizer: () => true });
    await wants.run();
    assert.deepEqual(wants.calls, [`mergePatch ${JSON.stringify({ metadata: { finalizers: [FINALIZER] } })}`]);
    const has = harness(live({ metadata: { name: 'thing', namespace: 'ns', finalizers: [FINALIZER] } }), ready, { wantsFinalizer: () => true });
    await has.run();
    assert.deepEqual(has.calls, []);
    const not = harness(live(), ready);
    await not.run();
    assert.deepEqual(not.calls, []);
  });

  it('while suspended runs no steps and keeps Ready as it was at the new generation, with no Reconciling or Stalled', async () => {
    const suspended = live({
      metadata: { name: 'thing', namespace: 'ns', generation: 2, uid: 'u' },
      spec: { suspend: true },
      status: { observedGeneration: 1, conditions: [READY, { ...READY, type: 'Reconciling', reason: 'Old' }] },
    });
    const h = harness(suspended, () => assert.fail('no steps while suspended'), { suspended: (o) => o.spec?.suspend === true });
    await h.run();
    assert.deepEqual(h.patches[0]?.body, { observedGeneration: 2, conditions: [{ ...READY, observedGeneration: 2 }] });
  });

  it('stalls on a StalledError: Ready=False + Stalled with its reason, no retry, the interval requeue', async () => {
    const h = harness(live(), () => Promise.reject(new StalledError('SecretNotFound', 'Secret ns/x does not exist')), { requeueAfterMs: () => 60_000 });
    assert.deepEqual(await h.run(), { requeueAfterMs: 60_000 });
    assert.deepEqual(h.patches[0]?.body.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=False/SecretNotFound', 'Stalled=True/SecretNotFound']);
  });

  it('writes any other error as Ready=False + Reconciling with the retry reason, then hands it to the queue (backoff)', async () => {
    const boom = new Error('connection reset');
    const h = harness(live(), () => Promise.reject(boom));
    await assert.rejects(h.run(), boom);
    assert.deepEqual(h.patches[0]?.body.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=False/ReconcileError', 'Reconciling=True/ReconcileError']);
  });

  it('hands a retry the steps name to the queue after writing their outcome', async () => {
    const upload = new Error('S3 unavailable');
    const h = harness(live(), async () => ({ outcome: { kind: 'failed', reason: 'ArtifactFailed', message: 'm' }, status: {}, retry: upload }));
    await assert.rejects(h.run(), upload);
    assert.equal(h.patches.length, 1);
  });

  it('writes nothing when the steps hold the write, and passes their requeue on', async () => {
    const h = harness(live(), async () => ({ outcome: { kind: 'progressing', reason: 'RollingOut', message: '' }, status: {}, hold: true, requeueAfterMs: 5_000 }));
    assert.deepEqual(await h.run(), { requeueAfterMs: 5_000 });
    assert.equal(h.patches.length, 0);
  });

  it('writes the base status on every run, an error too, under the fields of the steps', async () => {
    const base = { baseStatus: () => ({ note: 'base' }) };
    const failing = harness(live(), () => Promise.reject(new StalledError('NoCode', 'no')), base);
    await failing.run();
    assert.equal(failing.patches[0]?.body.note, 'base');
    const ok = harness(live(), ready, base);
    await ok.run();
    assert.equal(ok.patches[0]?.body.note, 'n');
  });

  it("reports each run before its write and waits at the turn's boundary, ending the turn even when the steps fail", async () => {
    const order: string[] = [];
    const h = harness(
      live(),
      async (_o, _k, boundary) => {
        await boundary();
        throw new StalledError('NoCode', 'no');
      },
      {
        begin: () => ({ boundary: async () => void order.push('boundary'), end: () => void order.push('end') }),
        report: (_o, result, failure) => void order.push(`report ${result.outcome.kind} ${failure instanceof StalledError}`),
      },
    );
    await h.run();
    assert.deepEqual(order, ['boundary', 'report stalled true', 'boundary', 'end']);
  });
});
