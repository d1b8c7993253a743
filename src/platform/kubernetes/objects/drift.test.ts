import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { covers, inSync, normalize, stamped, upToDate } from './drift.ts';

describe('inSync', () => {
  const desired = {
    metadata: { labels: { a: '1' }, ownerReferences: [{ uid: 'u1' }] },
    spec: { runtime: 'nodejs20', env: {}, envFromSecrets: [], memoryMB: 128 },
  };
  it('ignores empty values the API server drops and extra labels others add', () => {
    const live = { metadata: { labels: { a: '1', other: 'x' }, ownerReferences: [{ uid: 'u1' }] }, spec: { runtime: 'nodejs20', memoryMB: 128 } };
    assert.equal(inSync(desired, live), true);
  });
  it('applies CRD defaults to our side before comparing', () => {
    const live = { metadata: desired.metadata, spec: { functionRef: 'f', runID: 0 } };
    assert.equal(inSync({ metadata: desired.metadata, spec: { functionRef: 'f' } }, live, { runID: 0 }), true);
  });
  it('sees a changed spec, a missing label, another owner, or no object at all', () => {
    assert.equal(inSync(desired, { ...desired, spec: { ...desired.spec, memoryMB: 256 } }), false);
    assert.equal(inSync(desired, { ...desired, metadata: { ...desired.metadata, labels: {} } }), false);
    assert.equal(inSync(desired, { ...desired, metadata: { ...desired.metadata, ownerReferences: [{ uid: 'u2' }] } }), false);
    assert.equal(inSync(desired, undefined), false);
  });
  it('normalises key order', () => {
    assert.equal(JSON.stringify(normalize({ b: 1, a: { d: [], c: 2 } })), '{"a":{"c":2},"b":1}');
  });
});

describe('stamped + upToDate (owned workloads)', () => {
  const base = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'f', labels: { a: '1' } as Record<string, string>, annotations: {} as Record<string, string> },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
  };
  const desired = stamped(base);
  const live = () => ({
    metadata: { name: 'f', labels: { a: '1', extra: 'x' }, annotations: { ...desired.metadata?.annotations }, resourceVersion: '7' },
    spec: { replicas: 1, progressDeadlineSeconds: 600, template: { spec: { containers: [{ name: 'c', image: 'i', imagePullPolicy: 'IfNotPresent' }] } } },
    status: { availableReplicas: 1 },
  });
  it('is up to date when the live object (from a LIST: no apiVersion/kind) carries our form plus server defaults', () => {
    assert.equal(upToDate(desired, live()), true);
  });
  it('is not when someone changed a field we set, when we changed our form, or when it is gone', () => {
    const scaled = live();
    scaled.spec.replicas = 3;
    assert.equal(upToDate(desired, scaled), false);
    const other = stamped({ ...base, spec: { ...base.spec, replicas: 0 } });
    assert.equal(upToDate(other, live()), false, 'a new form has a new hash');
    assert.equal(upToDate(desired, undefined), false);
  });
  it('covers compares arrays element by element and by length', () => {
    assert.equal(covers({ a: [{ x: 1 }] }, { a: [{ x: 1, y: 2 }] }), true);
    assert.equal(covers({ a: [{ x: 1 }] }, { a: [{ x: 1 }, { x: 2 }] }), false);
  });
});
