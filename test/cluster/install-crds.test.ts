// installCrds returns only once each CRD is served: Established is not enough, since the API server
// builds a CRD's storage (and its watch cache) at the first request after it and answers 429
// "storage is (re)initializing" until that cache is filled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiextensionsV1Api, CustomObjectsApi, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { testKubeConfig } from '../helpers/kube.ts';
import { installCrds } from './install-crds.ts';

/** A CRD of its own per run (a fresh group), so that its storage is new to the API server. */
function throwawayCrd(group: string): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }],
    },
  };
}

test('right after installCrds, a LIST served from the watch cache (resourceVersion=0) of each new CRD succeeds', async () => {
  const kc = testKubeConfig();
  const crds = [1, 2, 3].map((i) => throwawayCrd(`t${Date.now().toString(36)}${i}.install-crds.test`));
  try {
    assert.deepEqual(await installCrds(kc, { crds }), crds.map((c) => c.metadata?.name));
    const custom = kc.makeApiClient(CustomObjectsApi);
    for (const crd of crds) {
      const list = (await custom.listClusterCustomObject({ group: crd.spec.group, version: 'v1', plural: 'widgets', resourceVersion: '0' })) as { items: unknown[] };
      assert.deepEqual(list.items, []);
    }
  } finally {
    const api = kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of crds) await api.deleteCustomResourceDefinition({ name: crd.metadata?.name ?? '' }).catch(() => undefined);
  }
});
