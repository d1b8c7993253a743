import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resourcePath } from './resource-paths.ts';

describe('resourcePath', () => {
  it('puts core kinds under /api/v1 and grouped kinds under /apis/group/version', () => {
    assert.equal(resourcePath('v1', 'Service', 'team-a', 'hello'), '/api/v1/namespaces/team-a/services/hello');
    assert.equal(resourcePath('apps/v1', 'Deployment', 'team-a', 'hello'), '/apis/apps/v1/namespaces/team-a/deployments/hello');
    assert.equal(resourcePath('batch/v1', 'CronJob', 'team-a', 'hello-nightly'), '/apis/batch/v1/namespaces/team-a/cronjobs/hello-nightly');
  });

  it('knows the four sless kinds by their CRD plurals', () => {
    assert.equal(resourcePath('sless.kube5s.ru/v1alpha1', 'Function', 'ns', 'f'), '/apis/sless.kube5s.ru/v1alpha1/namespaces/ns/functions/f');
    assert.equal(resourcePath('sless.kube5s.ru/v1alpha1', 'Trigger', 'ns', 't'), '/apis/sless.kube5s.ru/v1alpha1/namespaces/ns/triggers/t');
    assert.equal(resourcePath('sless.kube5s.ru/v1alpha1', 'FunctionRepository', 'ns'), '/apis/sless.kube5s.ru/v1alpha1/namespaces/ns/functionrepositories');
  });

  it('answers undefined for a kind it does not know, a wrong apiVersion or no namespace (the caller asks client-node)', () => {
    assert.equal(resourcePath('networking.k8s.io/v1', 'Ingress', 'ns', 'x'), undefined);
    assert.equal(resourcePath('v1', 'Deployment', 'ns', 'x'), undefined);
    assert.equal(resourcePath('v1', 'Service', undefined, 'x'), undefined);
  });

  it('escapes names as one path segment', () => {
    assert.equal(resourcePath('v1', 'Secret', 'ns', 'a/b'), '/api/v1/namespaces/ns/secrets/a%2Fb');
  });
});
