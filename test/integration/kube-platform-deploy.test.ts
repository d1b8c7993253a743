// deploy/: the kustomization renders, the real API server accepts it (`kubectl apply --dry-run=server`),
// its settings are what `sless controller` reads, and the RBAC grants what the controller does — and no more.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
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
  try {
    return await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') throw new Error('kubectl is not installed: .ci/install.d/20-kube.sh installs it (Debian kubernetes-client)', { cause: err });
    throw err;
  }
}

async function canI(verb: string, resource: string, namespace = 'some-user-ns'): Promise<boolean> {
  try {
    await kubectl(['auth', 'can-i', verb, resource, '-n', namespace, '--as', SA]);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 1) return false;
    throw err;
  }
}

describe('deploy/', () => {
  let objects: Obj[];
  const find = (kind: string, name: string) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    assert.ok(o, `${kind} ${name} is rendered`);
    return o;
  };

  before(async () => {
    const { stdout } = await kubectl(['kustomize', 'deploy/']);
    objects = parseAllDocuments(stdout).map((d) => d.toJS() as Obj);
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
      'Deployment/sless-controller',
      'Service/sless-controller',
    ]) {
      assert.ok(kinds.includes(want), `${want} in ${kinds.join(', ')}`);
    }
    for (const o of objects) {
      if (!['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind)) assert.equal(o.metadata.namespace, 'sless-system', `${o.kind}/${o.metadata.name}`);
    }
  });

  it('runs two hardened replicas with probes, downward-API identity and its settings', () => {
    const d = find('Deployment', 'sless-controller') as Obj & {
      spec: {
        replicas: number;
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

  it('grants no wildcard verbs or resources', () => {
    for (const kind of ['ClusterRole', 'Role']) {
      for (const role of objects.filter((o) => o.kind === kind) as Array<Obj & { rules: Array<{ verbs: string[]; resources: string[]; apiGroups: string[] }> }>) {
        for (const rule of role.rules) {
          assert.ok(![...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${kind}/${role.metadata.name}: ${JSON.stringify(rule)}`);
        }
      }
    }
  });

  it('is accepted by the API server (kubectl apply --dry-run=server -k deploy/)', async () => {
    // Namespaced objects can only be dry-run into namespaces that exist.
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['sless-system', 'sless-builds']) {
      await core.createNamespace({ body: { metadata: { name } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    }
    const { stdout } = await kubectl(['apply', '--dry-run=server', '-k', 'deploy/']);
    assert.match(stdout, /deployment\.apps\/sless-controller (created|configured|unchanged) \(server dry run\)/);
    assert.match(stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/sless-controller (created|configured|unchanged) \(server dry run\)/);
  });

  it('lets the controller do what it does, and not more', async () => {
    // Only the service account and its RBAC, for real, so the API server can answer can-i for it.
    const rbac = objects.filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
    const { spawn } = await import('node:child_process');
    await new Promise<void>((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', process.env.SLESS_TEST_KUBECONFIG ?? '', 'apply', '-f', '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl apply exited ${code}`))));
      child.stdin.end(rbac.map((o) => JSON.stringify(o)).join('\n'));
    });
    const allowed: Array<[string, string, string?]> = [
      ['watch', 'functions.sless.kube5s.ru'],
      ['create', 'functionrepositories.sless.kube5s.ru'],
      ['patch', 'functions.sless.kube5s.ru/status'],
      ['update', 'functions.sless.kube5s.ru/finalizers'],
      ['patch', 'deployments.apps'],
      ['delete', 'services'],
      ['create', 'jobs.batch', 'sless-builds'],
      ['patch', 'cronjobs.batch'],
      ['list', 'pods'],
      ['get', 'pods/log'],
      ['create', 'secrets'],
      ['get', 'secrets'],
      ['create', 'events'],
      ['create', 'namespaces'],
      ['create', 'leases.coordination.k8s.io', 'sless-system'],
      ['update', 'leases.coordination.k8s.io/sless-controller', 'sless-system'],
    ];
    for (const [verb, resource, ns] of allowed) assert.equal(await canI(verb, resource, ns), true, `may ${verb} ${resource}`);
    const denied: Array<[string, string, string?]> = [
      ['list', 'secrets'],
      ['delete', 'namespaces'],
      ['create', 'pods'],
      ['update', 'leases.coordination.k8s.io/someone-else', 'sless-system'],
      ['create', 'leases.coordination.k8s.io', 'some-user-ns'],
      ['create', 'clusterroles.rbac.authorization.k8s.io'],
    ];
    for (const [verb, resource, ns] of denied) assert.equal(await canI(verb, resource, ns), false, `may not ${verb} ${resource}`);
  });
});
