import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inSync, normalize } from './drift.ts';

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
