// Issue 11 item 4 against the real API server: deploy/base/rbac.yaml applied for real, the controller's
// ServiceAccount impersonated. What it may not do (Secrets anywhere, workloads where no tenant binding
// exists, granting itself other roles, binding in platform namespaces), what it may, and a controller
// that runs with exactly those rights still takes a push to a Ready function and refuses
// env_from_secrets that name platform Secrets.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  type KubernetesObject,
  type V1RoleBinding,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { TENANT_ROLE } from '../../src/platform/kubernetes/tenant-access.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { toErrorResponse } from '../../src/http/errors.ts';
import { PlatformError } from '../../src/platform/types.ts';
import { conditionOf, DIGEST_A, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';
import { setupPlatformKit, type PlatformKit } from './kube-platform-kit.ts';

const SA = { name: 'sless-controller', namespace: 'sless-system' };
const SA_USER = `system:serviceaccount:${SA.namespace}:${SA.name}`;
const RBAC_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];

type Obj = KubernetesObject & { metadata: { name: string; namespace?: string } };

async function deployObjects(file: string): Promise<Obj[]> {
  const text = await readFile(fileURLToPath(new URL(`../../deploy/${file}`, import.meta.url)), 'utf8');
  return parseAllDocuments(text).map((d) => d.toJS() as Obj);
}

/** The admin kubeconfig, acting as the controller's ServiceAccount (Impersonate-User). */
function asController(admin: KubeConfig): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters,
    contexts: admin.contexts,
    currentContext: admin.currentContext,
    users: admin.users.map((u) => ({ ...u, impersonateUser: SA_USER })),
  });
  return kc;
}

/** The HTTP status the API server answers `call` with (200 when it succeeds). */
async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (typeof code !== 'number') throw err;
    return code;
  }
}

function binding(namespace: string, role: string, name = TENANT_ROLE): V1RoleBinding {
  return {
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: SA.name, namespace: SA.namespace }],
  };
}

describe('deploy/base/rbac.yaml: the controller holds only what it needs', () => {
  const admin = testKubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const ctl = asController(admin);
  const ctlCore = ctl.makeApiClient(CoreV1Api);
  const ctlApps = ctl.makeApiClient(AppsV1Api);
  const ctlRbac = ctl.makeApiClient(RbacAuthorizationV1Api);
  const namespaces: TestNamespace[] = [];
  let tenant = '';
  let other = '';
  let kit: Kit | undefined;

  before(async () => {
    for (const name of ['sless-system', 'sless-builds']) {
      await core.createNamespace({ body: { metadata: { name } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    }
    const api = KubernetesObjectApi.makeApiClient(admin);
    const objects = [...(await deployObjects('base/service-account.yaml')), ...(await deployObjects('base/rbac.yaml'))];
    for (const o of objects.filter((x) => RBAC_KINDS.includes(x.kind ?? ''))) {
      await api.patch(o, undefined, undefined, 'sless-rbac-test', true, PatchStrategy.ServerSideApply);
    }
    // The API server enforces a new ValidatingAdmissionPolicy only once its informer has loaded it: wait
    // (a dry run is admitted like a real request), or the refusals below would be real bindings.
    await eventually(
      async () => {
        const probe = await statusOf(() => ctlRbac.createNamespacedRoleBinding({ namespace: 'sless-system', body: binding('sless-system', TENANT_ROLE), dryRun: 'All' }));
        assert.equal(probe, 403, 'the admission policy refuses bindings in sless-system');
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    for (const prefix of ['lp-tenant', 'lp-other']) namespaces.push(await freshNamespace(admin, prefix));
    [tenant, other] = namespaces.map((n) => n.name) as [string, string];
    // A platform Secret and an application Secret in the tenant namespace, as an operator would make them.
    await core.createNamespacedSecret({ namespace: tenant, body: { metadata: { name: 'db' }, stringData: { DB_PASSWORD: 'app' } } });
    await core.createNamespacedSecret({ namespace: other, body: { metadata: { name: 'db' }, stringData: { DB_PASSWORD: 'other' } } });
    await core.createNamespacedSecret({ namespace: 'sless-system', body: { metadata: { name: 'lp-platform-keys' }, stringData: { AWS_SECRET_ACCESS_KEY: 'x' } } }).catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  });
  after(async () => {
    await kit?.dispose();
    await Promise.all(namespaces.map((n) => n.cleanup()));
  });

  it('reads no Secret anywhere and writes no workload where it holds no tenant binding', async () => {
    assert.equal(await statusOf(() => ctlCore.listSecretForAllNamespaces()), 403, 'list Secrets cluster-wide');
    assert.equal(await statusOf(() => ctlCore.readNamespacedSecret({ namespace: 'sless-system', name: 'lp-platform-keys' })), 403, 'the platform’s Secrets');
    assert.equal(await statusOf(() => ctlCore.readNamespacedSecret({ namespace: tenant, name: 'db' })), 403, 'a tenant Secret before its namespace is ensured');
    assert.equal(await statusOf(() => ctlCore.listNamespacedSecret({ namespace: 'sless-builds' })), 403, 'the build namespace’s Secrets (the registry push credentials)');
    const deployment = { metadata: { name: 'x' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    assert.equal(await statusOf(() => ctlApps.createNamespacedDeployment({ namespace: tenant, body: deployment })), 403, 'a Deployment before the namespace is ensured');
    assert.equal(await statusOf(() => ctlCore.createNamespacedPod({ namespace: tenant, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } })), 403, 'pods');
    // Watching what it owns stays cluster-wide (its informers).
    assert.equal(await statusOf(() => ctlApps.listDeploymentForAllNamespaces({ labelSelector: 'app.kubernetes.io/managed-by=sless' })), 200);
  });

  it('cannot grant itself any role but sless-tenant, nor bind that in platform namespaces', async () => {
    // Roles that hold more than it does (binding its own sless-controller role would grant nothing new, so
    // RBAC allows it; admin and edit are aggregated, empty in a test cluster without the aggregation controller).
    for (const role of ['cluster-admin', 'system:kube-controller-manager', 'system:node']) {
      assert.equal(await statusOf(() => ctlRbac.createNamespacedRoleBinding({ namespace: tenant, body: binding(tenant, role, `lp-${role}`) })), 403, `bind ${role}`);
    }
    assert.equal(
      await statusOf(() => ctlRbac.createClusterRoleBinding({ body: { ...binding('', TENANT_ROLE), metadata: { name: 'lp-everywhere' } } })),
      403,
      'a ClusterRoleBinding',
    );
    assert.equal(
      await statusOf(() => ctlRbac.createNamespacedRole({ namespace: tenant, body: { metadata: { name: 'lp-secrets' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } })),
      403,
      'a Role of its own',
    );
    assert.equal(await statusOf(() => ctlRbac.patchClusterRole({ name: TENANT_ROLE, body: { rules: [] } })), 403, 'escalate: change sless-tenant');
    for (const ns of ['sless-system', 'sless-builds', 'kube-system']) {
      const status = await statusOf(() => ctlRbac.createNamespacedRoleBinding({ namespace: ns, body: binding(ns, TENANT_ROLE) }));
      assert.equal(status, 403, `bind sless-tenant in ${ns} (ValidatingAdmissionPolicy)`);
    }
  });

  it('deletes only the namespaces of pull-request previews (label sless.kube5s.ru/preview-of; ValidatingAdmissionPolicy)', async () => {
    const preview = { name: `${tenant}-pr-1`, cleanup: () => core.deleteNamespace({ name: `${tenant}-pr-1` }).then(() => undefined, () => undefined) };
    await core.createNamespace({ body: { metadata: { name: preview.name, labels: { 'sless.kube5s.ru/preview-of': tenant } } } });
    namespaces.push(preview);
    await eventually(async () => assert.equal(await statusOf(() => ctlCore.deleteNamespace({ name: other, dryRun: 'All' })), 403, 'a tenant namespace'), { timeoutMs: 30_000, intervalMs: 250 });
    assert.equal(await statusOf(() => ctlCore.deleteNamespace({ name: 'sless-system', dryRun: 'All' })), 403, 'a platform namespace');
    assert.equal(await statusOf(() => ctlCore.deleteNamespace({ name: preview.name, dryRun: 'All' })), 200, 'a preview namespace');
  });

  it('writes ResourceQuotas and LimitRanges only as its copies in preview namespaces (ValidatingAdmissionPolicy sless-controller-preview-limits)', async () => {
    const preview = `${tenant}-pr-2`;
    await core.createNamespace({ body: { metadata: { name: preview, labels: { 'sless.kube5s.ru/preview-of': tenant } } } });
    namespaces.push({ name: preview, cleanup: () => core.deleteNamespace({ name: preview }).then(() => undefined, () => undefined) });
    const copy = { 'app.kubernetes.io/managed-by': 'sless', 'sless.kube5s.ru/preview-of': tenant, 'sless.kube5s.ru/preview-number': '2' };
    const quota = (name: string, labels?: Record<string, string>) => ({ metadata: { name, ...(labels ? { labels } : {}) }, spec: { hard: { pods: '5' } } });
    // The tenant's own quota (its operator's) and the preview's own (an operator's policy engine).
    await core.createNamespacedResourceQuota({ namespace: tenant, body: quota('tenant-bound') });
    await core.createNamespacedResourceQuota({ namespace: preview, body: quota('preview-own') });
    await core.createNamespacedResourceQuota({ namespace: preview, body: quota('copied', copy) });
    await eventually(
      async () => assert.equal(await statusOf(() => ctlCore.createNamespacedResourceQuota({ namespace: other, body: quota('lp', copy), dryRun: 'All' })), 403, 'a ResourceQuota in a tenant namespace'),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // Reading the base: allowed everywhere.
    assert.equal(await statusOf(() => ctlCore.listNamespacedResourceQuota({ namespace: tenant })), 200, 'list the base’s quotas');
    assert.equal(await statusOf(() => ctlCore.listNamespacedLimitRange({ namespace: tenant })), 200, 'list the base’s limit ranges');
    // Lifting a tenant's bound: refused by the API server though RBAC allows the verbs.
    assert.equal(await statusOf(() => ctlCore.deleteNamespacedResourceQuota({ namespace: tenant, name: 'tenant-bound', dryRun: 'All' })), 403, 'delete a tenant’s quota');
    assert.equal(
      await statusOf(() => ctlCore.replaceNamespacedResourceQuota({ namespace: tenant, name: 'tenant-bound', body: { ...quota('tenant-bound', copy), spec: { hard: { pods: '500' } } }, dryRun: 'All' })),
      403,
      'raise a tenant’s quota',
    );
    const range = { metadata: { name: 'lp', labels: copy }, spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } };
    for (const ns of ['sless-system', 'kube-system', other]) {
      assert.equal(await statusOf(() => ctlCore.createNamespacedLimitRange({ namespace: ns, body: range, dryRun: 'All' })), 403, `a LimitRange in ${ns}`);
    }
    // In the preview namespace: its own copies, never the namespace's own objects nor an unlabelled one.
    assert.equal(await statusOf(() => ctlCore.createNamespacedLimitRange({ namespace: preview, body: range, dryRun: 'All' })), 200, 'create a copy');
    assert.equal(await statusOf(() => ctlCore.createNamespacedResourceQuota({ namespace: preview, body: quota('unlabelled'), dryRun: 'All' })), 403, 'create without managed-by=sless');
    assert.equal(
      await statusOf(() => ctlCore.replaceNamespacedResourceQuota({ namespace: preview, name: 'copied', body: { ...quota('copied', copy), spec: { hard: { pods: '7' } } }, dryRun: 'All' })),
      200,
      'update a copy',
    );
    assert.equal(await statusOf(() => ctlCore.deleteNamespacedResourceQuota({ namespace: preview, name: 'copied', dryRun: 'All' })), 200, 'delete a copy');
    assert.equal(await statusOf(() => ctlCore.deleteNamespacedResourceQuota({ namespace: preview, name: 'preview-own', dryRun: 'All' })), 403, 'delete the preview’s own quota');
    assert.equal(
      await statusOf(() => ctlCore.replaceNamespacedResourceQuota({ namespace: preview, name: 'preview-own', body: quota('preview-own', copy), dryRun: 'All' })),
      403,
      'take over the preview’s own quota by labelling it',
    );
    // Nor can it make a tenant namespace a preview: it may not update or patch namespaces.
    assert.equal(await statusOf(() => ctlCore.patchNamespace({ name: other, body: [{ op: 'add', path: '/metadata/labels', value: { 'sless.kube5s.ru/preview-of': tenant } }] })), 403, 'label a namespace');
  });

  it('binds sless-tenant in a tenant namespace and then works there, and only there', async () => {
    assert.equal(await statusOf(() => ctlRbac.createNamespacedRoleBinding({ namespace: tenant, body: binding(tenant, TENANT_ROLE) })), 200);
    await eventually(async () => assert.equal(await statusOf(() => ctlCore.readNamespacedSecret({ namespace: tenant, name: 'db' })), 200));
    assert.equal(await statusOf(() => ctlCore.readNamespacedSecret({ namespace: other, name: 'db' })), 403, 'another namespace stays closed');
    assert.equal(await statusOf(() => ctlCore.readNamespacedSecret({ namespace: 'sless-system', name: 'lp-platform-keys' })), 403);
  });

  it('is enough for the controller: a push becomes a Ready function, and platform Secrets in env_from_secrets are refused', async () => {
    kit = await setupKit('kube-least-priv', undefined, { systemNamespace: SA.namespace, tenantBinding: { serviceAccount: SA.name, namespace: SA.namespace } });
    const k = kit;
    // The build namespace of this kit gets the Role deploy/ gives sless-builds.
    const api = KubernetesObjectApi.makeApiClient(admin);
    for (const o of (await deployObjects('base/rbac.yaml')).filter((x) => x.metadata.namespace === 'sless-builds')) {
      await api.patch({ ...o, metadata: { ...o.metadata, namespace: k.buildNs } }, undefined, undefined, 'sless-rbac-test', true, PatchStrategy.ServerSideApply);
    }
    await core.createNamespacedSecret({ namespace: k.ns, body: { metadata: { name: 'app-config' }, stringData: { GREETING: 'hi' } } });
    await core.createNamespacedSecret({ namespace: k.ns, body: { metadata: { name: 'git' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token: 't' } } });
    await k.clone.write({
      ...nodeFunction('hello', { yaml: 'env_from_secrets: [app-config]\n' }),
      ...nodeFunction('thief', { yaml: 'env_from_secrets: [git]\n' }),
      ...nodeFunction('admin', { yaml: 'env_from_secrets: [sless-controller-secrets]\n' }),
    });
    await k.clone.commitAndPush('three functions');
    await k.startController(asController(admin));
    await k.createRepository('site');

    const job = await eventually(async () => {
      const [j] = await k.buildJobs('hello');
      assert.ok(j, `a build Job for hello; the controller said:\n${k.logs.slice(-15).join('\n')}`);
      return j;
    }, { timeoutMs: 60_000 });
    await markJobSucceeded(k.kc, k.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await k.serve('hello');
    await eventually(async () => {
      const fn = await k.getFunction('hello');
      assert.equal(fn?.status?.phase, 'Ready', JSON.stringify(fn?.status));
    }, { timeoutMs: 90_000 });
    // It bound itself in the function's namespace (and nowhere else was needed).
    const rb = await admin.makeApiClient(RbacAuthorizationV1Api).readNamespacedRoleBinding({ namespace: k.ns, name: TENANT_ROLE });
    assert.equal(rb.roleRef.name, TENANT_ROLE);

    for (const [name, pattern] of [
      ['thief', /type sless\.kube5s\.ru\/git-credentials, which a function may not read/],
      ['admin', /Secret sless-controller-secrets is one of the platform's own Secrets/],
    ] as const) {
      const fn = await eventually(async () => {
        const f = await k.getFunction(name);
        assert.equal(f?.status?.phase, 'Failed', JSON.stringify(f?.status));
        return f;
      }, { timeoutMs: 60_000 });
      assert.match(fn?.status?.message ?? '', pattern);
      assert.equal(conditionOf(fn!, 'Stalled')?.reason, 'SecretNotAllowed');
      assert.equal((await k.buildJobs(name)).length, 0, `${name}: nothing built`);
      assert.equal(await statusOf(() => admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: k.ns, name })), 404, `${name}: nothing deployed`);
    }
    assert.ok(!k.logs.some((l) => /forbidden/i.test(l)), `no request of the controller was refused:\n${k.logs.filter((l) => /forbidden/i.test(l)).join('\n')}`);
  });
});

describe('/v1 on Kubernetes: env_from_secrets names only application Secrets of the namespace', () => {
  let kit: PlatformKit;
  before(async () => {
    kit = await setupPlatformKit('lp-v1');
    await kit.core.createNamespacedSecret({ namespace: kit.ns, body: { metadata: { name: 'db' }, stringData: { DB_PASSWORD: 'app' } } });
    await kit.core.createNamespacedSecret({ namespace: kit.ns, body: { metadata: { name: 'site-credentials' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token: 't' } } });
  });
  after(() => kit?.dispose());

  it('refuses git credentials, platform Secrets and missing ones with 400 (invalid), accepts an application Secret', async () => {
    for (const [secret, pattern] of [
      ['site-credentials', /which a function may not read/],
      ['sless-controller-secrets', /platform's own Secrets/],
      ['nowhere', /does not exist/],
    ] as const) {
      await assert.rejects(
        kit.platform.createFunction(kit.ns, { name: `fn-${secret}`, runtime: 'nodejs20', envFromSecrets: [secret] }),
        (err: unknown) => err instanceof PlatformError && err.code === 'invalid' && pattern.test(err.message),
      );
      assert.equal(toErrorResponse(new PlatformError('invalid', 'x')).status, 400);
    }
    const ok = await kit.platform.createFunction(kit.ns, { name: 'fn-db', runtime: 'nodejs20', envFromSecrets: ['db'] });
    assert.deepEqual(ok.envFromSecrets, ['db']);
    await assert.rejects(kit.platform.updateFunction(kit.ns, 'fn-db', { name: 'fn-db', runtime: 'nodejs20', envFromSecrets: ['site-credentials'] }), /may not read/);
  });
});
