// spec.previews and status.previews of FunctionRepository on the real API server: the CRD fills in
// the defaults of src/preview/preview-settings.ts and keeps the status shape docs/previews.md names.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { FunctionRepositoryResource } from '../../src/platform/kubernetes/crd-types.ts';
import { PREVIEW_DEFAULTS } from '../../src/preview/preview-settings.ts';
import { freshNamespace, testKubeConfig } from '../helpers/kube.ts';

const G = { group: 'sless.kube5s.ru', version: 'v1alpha1', plural: 'functionrepositories' };

test('spec.previews gets its defaults, status.previews keeps what the controller writes, a bad ttl is refused', async () => {
  const kc = testKubeConfig();
  const ns = await freshNamespace(kc, 'previews-crd');
  after(() => ns.cleanup());
  const custom = kc.makeApiClient(CustomObjectsApi);
  const body = { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'FunctionRepository', metadata: { name: 'fns' }, spec: { url: 'http://git.test/a.git', previews: {} } };
  const created = (await custom.createNamespacedCustomObject({ ...G, namespace: ns.name, body })) as FunctionRepositoryResource;
  assert.deepEqual(created.spec.previews, { ...PREVIEW_DEFAULTS });
  const status = {
    previews: [
      {
        number: 3,
        namespace: `${ns.name}-pr-3`,
        branch: 'feature-x',
        head: 'a'.repeat(40),
        updatedAt: '2026-12-06T12:00:00Z',
        planned: true,
        functions: [{ name: 'hello', state: 'built', path: 'hello' }, { name: 'bye', state: 'failed', path: 'bye', error: 'bye/function.yaml:2: no runtime' }],
      },
    ],
  };
  const written = (await custom.replaceNamespacedCustomObjectStatus({ ...G, namespace: ns.name, name: 'fns', body: { ...created, status } })) as FunctionRepositoryResource;
  assert.deepEqual(written.status?.previews, status.previews);
  await assert.rejects(
    custom.createNamespacedCustomObject({ ...G, namespace: ns.name, body: { ...body, metadata: { name: 'bad' }, spec: { url: body.spec.url, previews: { ttl: 'soon' } } } }),
    /ttl/,
  );
});
