import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiRequestKind } from './api-request-kind.ts';

describe('apiRequestKind', () => {
  const cases: Array<[method: string, path: string, verb: string, resource: string]> = [
    ['GET', '/apis/sless.kube5s.ru/v1alpha1/namespaces/team-a/functions', 'LIST', 'functions'],
    ['GET', '/apis/sless.kube5s.ru/v1alpha1/namespaces/team-a/functions?labelSelector=a%3Db&limit=500', 'LIST', 'functions'],
    ['GET', '/apis/sless.kube5s.ru/v1alpha1/functions?watch=true&resourceVersion=12', 'WATCH', 'functions'],
    ['GET', '/api/v1/namespaces/b/pods?allowWatchBookmarks=true&watch=1', 'WATCH', 'pods'],
    ['GET', '/api/v1/watch/namespaces/b/pods', 'WATCH', 'pods'],
    ['GET', '/apis/sless.kube5s.ru/v1alpha1/namespaces/team-a/functions/hello', 'GET', 'functions'],
    ['PATCH', '/apis/sless.kube5s.ru/v1alpha1/namespaces/team-a/functions/hello/status', 'PATCH', 'functions/status'],
    ['PATCH', '/apis/sless.kube5s.ru/v1alpha1/namespaces/team-a/functions/hello?fieldManager=sless&force=true', 'PATCH', 'functions'],
    ['POST', '/apis/batch/v1/namespaces/builds/jobs?fieldManager=sless', 'POST', 'jobs'],
    ['GET', '/api/v1/namespaces/builds/pods/p-1/log?container=kaniko&tailLines=50', 'GET', 'pods/log'],
    ['PUT', '/apis/coordination.k8s.io/v1/namespaces/sless-system/leases/sless-controller', 'PUT', 'leases'],
    ['DELETE', '/apis/apps/v1/namespaces/a/deployments/d', 'DELETE', 'deployments'],
    // Cluster-scoped: a namespace itself, the collection of namespaces, a namespace's subresource.
    ['GET', '/api/v1/namespaces/team-a', 'GET', 'namespaces'],
    ['GET', '/api/v1/namespaces', 'LIST', 'namespaces'],
    ['PUT', '/api/v1/namespaces/team-a/finalize', 'PUT', 'namespaces/finalize'],
    ['GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/x', 'GET', 'clusterroles'],
    // Discovery (client-node's KubernetesObjectApi resolves kinds to plurals) and everything else.
    ['GET', '/apis/apps/v1', 'GET', 'discovery'],
    ['GET', '/api/v1', 'GET', 'discovery'],
    ['GET', '/apis', 'GET', 'discovery'],
    ['GET', '/version', 'GET', 'other'],
    ['GET', '/openapi/v3/apis/apps/v1', 'GET', 'other'],
    ['HEAD', '/api/v1/namespaces/a/pods/p', 'OTHER', 'pods'],
  ];
  for (const [method, path, verb, resource] of cases) {
    it(`${method} ${path} is ${verb} ${resource}`, () => {
      assert.deepEqual(apiRequestKind(method, path), { verb, resource });
    });
  }

  it('never puts a name or a namespace into the resource, whatever the path holds', () => {
    for (const path of [
      '/api/v1/namespaces/Secret-Name/pods/x',
      '/apis/x/v1/namespaces/n/things%2Fname/y',
      '/apis/x/v1/namespaces/n/WeIrD/a/b/c/d',
      `/apis/x/v1/namespaces/n/${'a'.repeat(300)}`,
    ]) {
      const { resource } = apiRequestKind('GET', path);
      assert.match(resource, /^(pods|other)$/, `${path} -> ${resource}`);
    }
  });
});
