import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLimitCopy, limitCopyLabels, planLimitCopies, type LimitObject } from './preview-limits.ts';

const id = { namespace: 'team', repository: 'fns', number: 7 };
const copyLabels = limitCopyLabels(id);
const quota = (name: string, hard: Record<string, string>, labels?: Record<string, string>): LimitObject => ({ kind: 'ResourceQuota', name, spec: { hard }, ...(labels ? { labels } : {}) });
const range = (name: string, max: string, labels?: Record<string, string>): LimitObject => ({
  kind: 'LimitRange',
  name,
  spec: { limits: [{ type: 'Container', max: { cpu: max } }] },
  ...(labels ? { labels } : {}),
});

describe("a preview's copies of the base namespace's ResourceQuotas and LimitRanges", () => {
  it('labels a copy with the preview labels and managed-by=sless, and knows only such objects as its copies', () => {
    assert.deepEqual(copyLabels, { 'sless.kube5s.ru/preview-of': 'team', 'sless.kube5s.ru/preview-number': '7', 'app.kubernetes.io/managed-by': 'sless' });
    assert.equal(isLimitCopy(copyLabels, id), true);
    assert.equal(isLimitCopy({ 'app.kubernetes.io/managed-by': 'sless' }, id), false, 'managed-by alone: not this preview’s');
    assert.equal(isLimitCopy({ ...copyLabels, 'sless.kube5s.ru/preview-number': '8' }, id), false, 'another preview’s');
    assert.equal(isLimitCopy({ ...copyLabels, 'app.kubernetes.io/managed-by': 'kyverno' }, id), false, 'another manager’s');
    assert.equal(isLimitCopy(undefined, id), false);
  });

  it('a new preview: every base object is created, with its name and spec', () => {
    const plan = planLimitCopies([quota('compute', { cpu: '2' }), range('defaults', '1')], [], id);
    assert.deepEqual(plan.create, [
      { kind: 'ResourceQuota', name: 'compute', spec: { hard: { cpu: '2' } }, labels: copyLabels },
      { kind: 'LimitRange', name: 'defaults', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] }, labels: copyLabels },
    ]);
    assert.deepEqual([plan.update, plan.delete, plan.kept], [[], [], []]);
  });

  it('copies equal to the base: nothing to write (key order does not matter)', () => {
    const base = [{ ...quota('compute', {}), spec: { hard: { cpu: '2', memory: '1Gi' } } }, range('defaults', '1')];
    const copies = [{ ...quota('compute', {}, copyLabels), spec: { hard: { memory: '1Gi', cpu: '2' } } }, range('defaults', '1', copyLabels)];
    assert.deepEqual(planLimitCopies(base, copies, id), { create: [], update: [], delete: [], kept: [] });
  });

  it('a changed base spec: the copy is updated, conditionally on the version listed', () => {
    const plan = planLimitCopies([quota('compute', { cpu: '4' })], [{ ...quota('compute', { cpu: '2' }, copyLabels), resourceVersion: '41' }], id);
    assert.deepEqual(plan.update, [{ kind: 'ResourceQuota', name: 'compute', spec: { hard: { cpu: '4' } }, labels: copyLabels, resourceVersion: '41' }]);
    assert.deepEqual([plan.create, plan.delete], [[], []]);
  });

  it('a base object gone: its copy is deleted; the preview’s own objects and other previews’ are not', () => {
    const preview = [
      quota('compute', { cpu: '2' }, copyLabels),
      range('defaults', '1', copyLabels),
      quota('operator-policy', { pods: '10' }),
      quota('kyverno-made', { pods: '10' }, { 'app.kubernetes.io/managed-by': 'kyverno' }),
      quota('other-preview', { pods: '1' }, { ...copyLabels, 'sless.kube5s.ru/preview-number': '8' }),
    ];
    const plan = planLimitCopies([range('defaults', '1')], preview, id);
    assert.deepEqual(plan.delete, [{ kind: 'ResourceQuota', name: 'compute' }]);
    assert.deepEqual([plan.create, plan.update, plan.kept], [[], [], []]);
  });

  it('the preview holds its own object of a base object’s kind and name: kept as it is, never overwritten', () => {
    const plan = planLimitCopies([quota('compute', { cpu: '2' }), range('compute', '1')], [quota('compute', { cpu: '8' })], id);
    assert.deepEqual(plan.kept, [{ kind: 'ResourceQuota', name: 'compute' }]);
    assert.deepEqual(plan.create.map((c) => `${c.kind}/${c.name}`), ['LimitRange/compute'], 'the same name in the other kind is another object');
    assert.deepEqual([plan.update, plan.delete], [[], []]);
  });

  it('no base objects and no copies: nothing', () => {
    assert.deepEqual(planLimitCopies([], [quota('own', { pods: '3' })], id), { create: [], update: [], delete: [], kept: [] });
  });
});
