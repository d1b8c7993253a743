import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPreviewNamespace, previewNamespaceLabels, previewObjects } from './preview-objects.ts';
import type { RepositoryObjects } from '../objects/repository-objects.ts';

const id = { namespace: 'team', repository: 'fns', number: 7 };
const owner = [{ apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'FunctionRepository', name: 'fns', uid: 'u' }];
const meta = (name: string) => ({ name, namespace: 'team-pr-7', labels: { 'sless.kube5s.ru/repository': 'fns' }, ownerReferences: owner });
const objects: RepositoryObjects = {
  fn: { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Function', metadata: meta('hello'), spec: { runtime: 'nodejs20', envFromSecrets: ['db'] } },
  triggers: [
    { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Trigger', metadata: meta('hello-http'), spec: { type: 'http', functionRef: 'hello' } },
    { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Trigger', metadata: meta('hello-cron-n'), spec: { type: 'cron', functionRef: 'hello', schedule: '* * * * *' } },
    { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Trigger', metadata: meta('hello-queue-q'), spec: { type: 'queue', functionRef: 'hello' } },
  ],
  jobs: [{ apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'FunctionJob', metadata: meta('hello-job-j'), spec: { functionRef: 'hello' } }],
} as RepositoryObjects;

describe("a preview's objects", () => {
  it('default (schedules false, secrets none): the Function and its http Trigger only, no Secrets, no ownerReference, the preview labels', () => {
    const p = previewObjects(objects, id, { schedules: false, secrets: 'none' });
    assert.deepEqual(p.triggers.map((t) => t.metadata?.name), ['hello-http']);
    assert.deepEqual(p.jobs, []);
    assert.deepEqual(p.fn.spec?.envFromSecrets, []);
    for (const o of [p.fn, ...p.triggers]) {
      assert.equal(o.metadata?.ownerReferences, undefined);
      assert.equal(o.metadata?.labels?.['sless.kube5s.ru/preview-of'], 'team');
      assert.equal(o.metadata?.labels?.['sless.kube5s.ru/preview-number'], '7');
      assert.equal(o.metadata?.labels?.['sless.kube5s.ru/repository'], 'fns');
    }
  });

  it('schedules true keeps cron and queue Triggers and FunctionJobs; secrets inherit keeps env_from_secrets', () => {
    const p = previewObjects(objects, id, { schedules: true, secrets: 'inherit' });
    assert.equal(p.triggers.length, 3);
    assert.equal(p.jobs.length, 1);
    assert.deepEqual(p.fn.spec?.envFromSecrets, ['db']);
  });

  it('a namespace is this preview only with all three labels', () => {
    assert.equal(isPreviewNamespace(previewNamespaceLabels(id), id), true);
    assert.equal(isPreviewNamespace(previewNamespaceLabels({ ...id, repository: 'other' }), id), false);
    assert.equal(isPreviewNamespace({ team: 'x' }, id), false);
    assert.equal(isPreviewNamespace(undefined, id), false);
  });
});
