// deploy/: the kustomization renders, the real API server accepts it (`kubectl apply --dry-run=server`),
// its settings are what `sless controller` reads, and the RBAC grants what the controller does — and no more.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { before, describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AuthorizationV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { loadControllerConfig } from '../../src/config/config.ts';
import { testKubeConfig } from '../helpers/kube.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const SA = 'system:serviceaccount:sless-system:sless-controller';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

async function kubectl(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const kubeconfig = process.env.SLESS_TEST_KUBECONFIG;
  if (!kubeconfig) throw new Error('SLESS_TEST_KUBECONFIG is not set: run this suite through `npm test` (it starts the kube service)');
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
}

/**
 * kubectl renders and applies the kustomization when it is recent enough (kustomize v4+ inside, kubectl
 * >= 1.21). Debian bookworm's kubernetes-client is 1.20 (kustomize v2: no `labels`, no directory
 * resources), so without a recent kubectl the test renders the kustomization itself (it uses only
 * resources, labels and images) and dry-runs each object with client-node's server-side apply.
 */
async function modernKubectl(): Promise<boolean> {
  try {
    const { stdout } = await run('kubectl', ['version', '--client', '-o', 'json']);
    const minor = Number.parseInt((JSON.parse(stdout) as { clientVersion?: { minor?: string } }).clientVersion?.minor ?? '0', 10);
    return minor >= 21;
  } catch {
    return false;
  }
}

interface Kustomization {
  resources?: string[];
  labels?: Array<{ pairs: Record<string, string> }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}

async function renderKustomization(dir: string): Promise<Obj[]> {
  const k = parse(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const out: Obj[] = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    if (r.endsWith('.yaml') || r.endsWith('.yml')) out.push(...parseAllDocuments(await readFile(p, 'utf8')).map((d) => d.toJS() as Obj));
    else out.push(...(await renderKustomization(p)));
  }
  for (const o of out) {
    const meta = o.metadata as Obj['metadata'] & { labels?: Record<string, string> };
    for (const l of k.labels ?? []) meta.labels = { ...meta.labels, ...l.pairs };
    const containers = (o as { spec?: { template?: { spec?: { containers?: Array<{ image: string }> } } } }).spec?.template?.spec?.containers ?? [];
    for (const c of containers) {
      const img = (k.images ?? []).find((i) => i.name === c.image);
      if (img) c.image = `${img.newName ?? img.name}${img.newTag ? `:${img.newTag}` : ''}`;
    }
  }
  return out;
}

interface Access {
  readonly verb: string;
  /** `resource[.group][/subresource]`, e.g. `functions.sless.kube5s.ru/status`, `pods/log`. */
  readonly resource: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** Asks the API server whether the controller's service account may do something (SubjectAccessReview). */
async function canI(a: Access): Promise<boolean> {
  const [main = '', subresource] = a.resource.split('/');
  const dot = main.indexOf('.');
  const review = await testKubeConfig()
    .makeApiClient(AuthorizationV1Api)
    .createSubjectAccessReview({
      body: {
        spec: {
          user: SA,
          groups: ['system:serviceaccounts', 'system:serviceaccounts:sless-system', 'system:authenticated'],
          resourceAttributes: {
            verb: a.verb,
            namespace: a.namespace ?? 'some-user-ns',
            group: dot === -1 ? '' : main.slice(dot + 1),
            resource: dot === -1 ? main : main.slice(0, dot),
            ...(subresource ? { subresource } : {}),
            ...(a.name ? { name: a.name } : {}),
          },
        },
      },
    });
  return review.status?.allowed === true;
}

describe('deploy/', () => {
  let objects: Obj[];
  const find = (kind: string, name: string) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    assert.ok(o, `${kind} ${name} is rendered`);
    return o;
  };

  let withKubectl = false;
  before(async () => {
    withKubectl = await modernKubectl();
    if (withKubectl) {
      const { stdout } = await kubectl(['kustomize', 'deploy/']);
      objects = parseAllDocuments(stdout).map((d) => d.toJS() as Obj);
    } else {
      objects = await renderKustomization(path.join(root, 'deploy'));
    }
  });

  it('renders the CRDs, the controller in sless-system and the build namespace', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    for (const want of [
      'CustomResourceDefinition/functions.sless.kube5s.ru',
      'CustomResourceDefinition/triggers.sless.kube5s.ru',
      'CustomResourceDefinition/functionjobs.sless.kube5s.ru',
      'CustomResourceDefinition/functionrepositories.sless.kube5s.ru',
      'Namespace/sless-system',
      'Namespace/sless-builds',
      'ServiceAccount/sless-controller',
      'ClusterRole/sless-controller',
      'ClusterRoleBinding/sless-controller',
      'Role/sless-controller-leader-election',
      'RoleBinding/sless-controller-leader-election',
      'StatefulSet/sless-controller',
      'ClusterRole/sless-tenant',
      'Role/sless-controller-builds',
      'RoleBinding/sless-controller-builds',
      'ValidatingAdmissionPolicy/sless-controller-tenant-bindings',
      'Service/sless-controller',
    ]) {
      assert.ok(kinds.includes(want), `${want} in ${kinds.join(', ')}`);
    }
    for (const o of objects) {
      if (['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(o.kind)) continue;
      // The builds' NetworkPolicy and the controller's rights there live in the build namespace; everything else beside the controller.
      const want = o.kind === 'NetworkPolicy' || o.metadata.name === 'sless-controller-builds' ? 'sless-builds' : 'sless-system';
      assert.equal(o.metadata.namespace, want, `${o.kind}/${o.metadata.name}`);
    }
  });

  it('exposes /metrics on a Service of its own, apart from the public one (issue 31 item 12)', () => {
    type Svc = Obj & { spec: { ports: Array<{ name: string; port: number; targetPort: string | number }> } };
    const pub = find('Service', 'sless-controller') as Svc;
    assert.deepEqual(pub.spec.ports.map((p) => p.targetPort), ['http'], 'the public Service reaches only the http port');
    const metrics = find('Service', 'sless-controller-metrics') as Svc;
    assert.deepEqual(metrics.spec.ports.map((p) => [p.name, p.targetPort]), [['metrics', 'metrics']]);
    const d = find('StatefulSet', 'sless-controller') as Obj & { spec: { template: { spec: { containers: Array<{ ports: Array<{ name: string; containerPort: number }> }> } } } };
    const ports = Object.fromEntries(d.spec.template.spec.containers[0]!.ports.map((p) => [p.name, p.containerPort]));
    const config = find('ConfigMap', 'sless-controller-config') as Obj & { data: Record<string, string> };
    assert.deepEqual(ports, { http: Number(config.data.SLESS_PORT), metrics: Number(config.data.SLESS_METRICS_PORT) });
  });

  it('runs two hardened replicas with probes, downward-API identity and its settings', () => {
    const d = find('StatefulSet', 'sless-controller') as Obj & {
      spec: {
        replicas: number;
        volumeClaimTemplates: Array<{ metadata: { name: string }; spec: { accessModes: string[]; resources: { requests: { storage: string } } } }>;
        template: {
          spec: {
            serviceAccountName: string;
            securityContext: { runAsNonRoot: boolean };
            containers: Array<{
              image: string;
              args: string[];
              env: Array<{ name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
              readinessProbe: { httpGet: { path: string } };
              livenessProbe: { httpGet: { path: string } };
              resources: { requests: object; limits: object };
              securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
              volumeMounts: Array<{ name: string; mountPath: string }>;
            }>;
          };
        };
      };
    };
    assert.equal(d.spec.replicas, 2);
    const pod = d.spec.template.spec;
    assert.equal(pod.serviceAccountName, 'sless-controller');
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const c = pod.containers[0]!;
    assert.deepEqual(c.args, ['controller']);
    assert.match(c.image, /^ghcr\.io\/kube5s\/sless-controller:/);
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.ok(c.resources.requests && c.resources.limits);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    const fromField = Object.fromEntries(c.env.filter((e) => e.valueFrom?.fieldRef).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath]));
    assert.deepEqual(fromField, { POD_NAMESPACE: 'metadata.namespace', POD_NAME: 'metadata.name' });

    // The ConfigMap and Secret are a complete, valid controller configuration.
    const config = find('ConfigMap', 'sless-controller-config') as Obj & { data: Record<string, string> };
    const secret = find('Secret', 'sless-controller-secrets') as Obj & { stringData: Record<string, string> };
    const settings = loadControllerConfig([], { ...config.data, ...secret.stringData, POD_NAMESPACE: 'sless-system', POD_NAME: 'x' });
    assert.equal(settings.buildNamespace, 'sless-builds');
    assert.equal(settings.cacheDir, '/var/cache/sless');
  });

  it('keeps the git cache on a volume claim per replica, mounted where SLESS_CACHE_DIR points (it survives restarts)', () => {
    const d = find('StatefulSet', 'sless-controller') as Obj & {
      spec: {
        volumeClaimTemplates: Array<{ metadata: { name: string }; spec: { accessModes: string[]; resources: { requests: { storage: string } } } }>;
        template: { spec: { containers: Array<{ volumeMounts: Array<{ name: string; mountPath: string }> }>; volumes?: Array<{ name: string }> } };
      };
    };
    const config = find('ConfigMap', 'sless-controller-config') as Obj & { data: Record<string, string> };
    const claim = d.spec.volumeClaimTemplates.find((c) => c.metadata.name === 'git-cache');
    assert.ok(claim, 'a git-cache volume claim template');
    assert.deepEqual(claim.spec.accessModes, ['ReadWriteOnce']);
    const gib = Number(/^(\d+)Gi$/.exec(claim.spec.resources.requests.storage)?.[1]);
    assert.ok(gib >= 1 && gib <= 50, `a sane size: ${claim.spec.resources.requests.storage}`);
    const mount = d.spec.template.spec.containers[0]!.volumeMounts.find((m) => m.name === 'git-cache');
    assert.equal(mount?.mountPath, config.data.SLESS_CACHE_DIR);
    // Not shadowed by a pod volume of the same name (an emptyDir would lose the cache on restart).
    assert.ok(!(d.spec.template.spec.volumes ?? []).some((v) => v.name === 'git-cache'));
  });

  it('grants no wildcard verbs or resources', () => {
    for (const kind of ['ClusterRole', 'Role']) {
      for (const role of objects.filter((o) => o.kind === kind) as Array<Obj & { rules: Array<{ verbs: string[]; resources: string[]; apiGroups: string[] }> }>) {
        for (const rule of role.rules) {
          assert.ok(![...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${kind}/${role.metadata.name}: ${JSON.stringify(rule)}`);
        }
      }
    }
  });

  it('is accepted by the API server (kubectl apply --dry-run=server -k deploy/)', async (t) => {
    // Namespaced objects can only be dry-run into namespaces that exist.
    const kc = testKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of ['sless-system', 'sless-builds']) {
      await core.createNamespace({ body: { metadata: { name } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    }
    if (withKubectl) {
      const { stdout } = await kubectl(['apply', '--dry-run=server', '-k', 'deploy/']);
      assert.match(stdout, /statefulset\.apps\/sless-controller (created|configured|unchanged) \(server dry run\)/);
      assert.match(stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/sless-controller (created|configured|unchanged) \(server dry run\)/);
      return;
    }
    t.diagnostic('kubectl is missing or older than 1.21: rendered here and dry-run with client-node server-side apply');
    const api = KubernetesObjectApi.makeApiClient(kc);
    for (const o of objects) {
      await api.patch(o as unknown as KubernetesObject, undefined, 'All', 'sless-deploy-test', true, PatchStrategy.ServerSideApply);
    }
  });

  it('lets the controller do what it does, and not more', async () => {
    // Only the service account and its RBAC, for real, so the API server can review access for it.
    const api = KubernetesObjectApi.makeApiClient(testKubeConfig());
    for (const o of objects.filter((x) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(x.kind))) {
      await api.patch(o as unknown as KubernetesObject, undefined, undefined, 'sless-deploy-test', true, PatchStrategy.ServerSideApply);
    }
    const allowed: Access[] = [
      { verb: 'watch', resource: 'functions.sless.kube5s.ru' },
      { verb: 'create', resource: 'functionrepositories.sless.kube5s.ru' },
      { verb: 'patch', resource: 'functions.sless.kube5s.ru/status' },
      { verb: 'update', resource: 'functions.sless.kube5s.ru/finalizers' },
      // Its informers: what it owns, read in every namespace.
      { verb: 'watch', resource: 'deployments.apps', namespace: '' },
      { verb: 'list', resource: 'services', namespace: '' },
      { verb: 'watch', resource: 'jobs.batch', namespace: '' },
      { verb: 'list', resource: 'cronjobs.batch', namespace: '' },
      { verb: 'create', resource: 'jobs.batch', namespace: 'sless-builds' },
      { verb: 'get', resource: 'pods/log', namespace: 'sless-builds' },
      { verb: 'get', resource: 'secrets', name: 'sless-build-s3', namespace: 'sless-builds' },
      { verb: 'delete', resource: 'secrets', name: 'sless-build-s3', namespace: 'sless-builds' },
      { verb: 'create', resource: 'events' },
      { verb: 'create', resource: 'namespaces', namespace: '' },
      // Preview namespaces go with their PR; RBAC cannot say which, so the admission policy
      // sless-controller-preview-namespaces refuses every other (kube-least-privilege.test.ts shows it).
      { verb: 'delete', resource: 'namespaces', namespace: '' },
      // A preview's copies of its base's ResourceQuotas and LimitRanges; the admission policy
      // sless-controller-preview-limits refuses writes outside preview namespaces (kube-least-privilege.test.ts).
      { verb: 'list', resource: 'resourcequotas' },
      { verb: 'list', resource: 'limitranges' },
      { verb: 'create', resource: 'resourcequotas' },
      { verb: 'update', resource: 'limitranges' },
      { verb: 'delete', resource: 'resourcequotas' },
      { verb: 'create', resource: 'rolebindings.rbac.authorization.k8s.io' },
      { verb: 'bind', resource: 'clusterroles.rbac.authorization.k8s.io', name: 'sless-tenant', namespace: '' },
      { verb: 'create', resource: 'leases.coordination.k8s.io', namespace: 'sless-system' },
      { verb: 'update', resource: 'leases.coordination.k8s.io', name: 'sless-controller', namespace: 'sless-system' },
    ];
    for (const a of allowed) assert.equal(await canI(a), true, `may ${a.verb} ${a.resource}`);
    // In a namespace it has not bound sless-tenant in (some-user-ns), and in the platform's own.
    const denied: Access[] = [
      { verb: 'get', resource: 'secrets' },
      { verb: 'list', resource: 'secrets' },
      { verb: 'create', resource: 'secrets' },
      { verb: 'get', resource: 'secrets', namespace: '' },
      { verb: 'get', resource: 'secrets', namespace: 'sless-system', name: 'sless-controller-secrets' },
      { verb: 'get', resource: 'secrets', namespace: 'sless-builds', name: 'sless-registry' },
      { verb: 'patch', resource: 'deployments.apps' },
      { verb: 'delete', resource: 'services' },
      { verb: 'create', resource: 'jobs.batch' },
      { verb: 'patch', resource: 'cronjobs.batch' },
      { verb: 'list', resource: 'pods' },
      { verb: 'get', resource: 'pods/log' },
      { verb: 'bind', resource: 'clusterroles.rbac.authorization.k8s.io', name: 'cluster-admin', namespace: '' },
      { verb: 'bind', resource: 'clusterroles.rbac.authorization.k8s.io', name: 'sless-controller', namespace: '' },
      { verb: 'escalate', resource: 'clusterroles.rbac.authorization.k8s.io', name: 'sless-tenant', namespace: '' },
      { verb: 'update', resource: 'rolebindings.rbac.authorization.k8s.io' },
      { verb: 'create', resource: 'roles.rbac.authorization.k8s.io' },
      { verb: 'create', resource: 'clusterrolebindings.rbac.authorization.k8s.io', namespace: '' },
      { verb: 'create', resource: 'pods' },
      { verb: 'update', resource: 'leases.coordination.k8s.io', name: 'someone-else', namespace: 'sless-system' },
      { verb: 'create', resource: 'leases.coordination.k8s.io' },
      { verb: 'create', resource: 'clusterroles.rbac.authorization.k8s.io', namespace: '' },
      { verb: 'patch', resource: 'resourcequotas' },
      { verb: 'deletecollection', resource: 'limitranges' },
      { verb: 'update', resource: 'resourcequotas/status' },
    ];
    for (const a of denied) assert.equal(await canI(a), false, `may not ${a.verb} ${a.resource}`);
  });
});
