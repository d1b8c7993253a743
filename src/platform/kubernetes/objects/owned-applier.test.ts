import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stamped } from './drift.ts';
import { OwnedApplier } from './owned-applier.ts';

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { replicas?: number; entrypoint?: string; memoryMB?: number };
}

function applier() {
  const sent: Obj[] = [];
  const owned = new OwnedApplier(async <T,>(o: T) => {
    sent.push(o as Obj);
    return { ...o, metadata: { ...(o as Obj).metadata, resourceVersion: String(sent.length + 100) } } as T;
  });
  return { owned, sent };
}

const service = (replicas = 1): Obj => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'f', namespace: 'ns' }, spec: { replicas } });
/** The live form the API server keeps: ours plus its own defaults and a resourceVersion. */
const asLive = (o: Obj, resourceVersion: string): Obj => {
  const s = stamped(o);
  return { ...s, metadata: { ...s.metadata, resourceVersion }, spec: { ...s.spec, entrypoint: 'server default' } };
};

describe('OwnedApplier', () => {
  it('applies a workload that is missing or differs, stamped with the hash of its form; nothing when the live one is that form', async () => {
    const { owned, sent } = applier();
    const first = await owned.ensure(service(), undefined);
    assert.equal(first.applied, true);
    assert.equal(sent[0]?.metadata?.annotations?.['sless.kube5s.ru/applied-hash'], first.hash);
    assert.deepEqual(await owned.ensure(service(), asLive(service(), '7')), { applied: false, hash: first.hash });
    assert.equal((await owned.ensure(service(2), asLive(service(), '7'))).applied, true);
  });

  it('does not apply the same form again while the cache still shows what it showed before that apply', async () => {
    const { owned, sent } = applier();
    const stale = asLive(service(1), '7');
    await owned.ensure(service(2), stale);
    await owned.ensure(service(2), stale);
    assert.equal(sent.length, 1, 'the cache lags behind our own apply');
    // Someone changed it since (a new resourceVersion that is not our form): applied again.
    await owned.ensure(service(2), asLive(service(1), '9'));
    assert.equal(sent.length, 2);
  });

  it('forgets what it applied once the object is gone, so a deleted workload is made again', async () => {
    const { owned, sent } = applier();
    await owned.ensure(service(), undefined);
    await owned.ensure(service(), undefined);
    assert.equal(sent.length, 1);
    owned.forget('ns', 'f');
    await owned.ensure(service(), undefined);
    assert.equal(sent.length, 2);
  });

  it('compares a sless object by spec with the CRD defaults filled in, ignoring what `comparable` drops', async () => {
    const { owned, sent } = applier();
    const fn: Obj = { kind: 'Function', metadata: { name: 'f', namespace: 'ns' }, spec: { entrypoint: 'handler.handle' } };
    const live: Obj = { ...fn, spec: { entrypoint: 'handler.handle', memoryMB: 128 } };
    assert.equal((await owned.ensureObject(fn, live, { memoryMB: 128 })).applied, false);
    assert.equal((await owned.ensureObject(fn, { ...fn, spec: { entrypoint: 'other.handle' } }, {})).applied, true);
    const noEntrypoint = (o: Obj | undefined) => o && { ...o, spec: {} };
    assert.equal((await owned.ensureObject(fn, { ...fn, spec: { entrypoint: 'other.handle' } }, {}, noEntrypoint)).applied, false);
    assert.equal(sent.length, 1);
  });
});
