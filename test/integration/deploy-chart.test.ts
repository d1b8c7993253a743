// The two other forms of the install beside the kustomize base: the Helm chart (deploy/chart/) renders
// the objects `kubectl kustomize deploy/` renders, from documented values, and lints clean; the trial
// overlay (deploy/quickstart/) brings S3 and a registry that fit the controller's settings. The real API
// server accepts every rendered form by server-side dry run (kube service; Helm from .ci/install.d/45-helm.sh).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { loadControllerConfig } from '../../src/config/config.ts';
import { helm } from '../helpers/helm.ts';
import { freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const chart = path.join(root, 'deploy', 'chart');

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

async function kubectl(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const kubeconfig = process.env.SLESS_TEST_KUBECONFIG;
  if (!kubeconfig) throw new Error('SLESS_TEST_KUBECONFIG is not set: run this suite through `npm test` (it starts the kube service)');
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
}

function parseObjects(yaml: string): Obj[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const keyOf = (o: Obj) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** What Helm adds by design, taken away so the rest can be compared with the kustomize form. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];
function withoutHelmMarks(o: Obj): Obj {
  const copy = structuredClone(o);
  const strip = (meta: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) => {
    if (!meta) return;
    for (const l of HELM_LABELS) delete meta.labels?.[l];
    if (meta.labels?.['app.kubernetes.io/managed-by'] === 'Helm') delete meta.labels['app.kubernetes.io/managed-by'];
    for (const a of Object.keys(meta.annotations ?? {})) {
      if (a === 'helm.sh/resource-policy' || a.startsWith('checksum/')) delete meta.annotations![a];
    }
    if (meta.annotations && Object.keys(meta.annotations).length === 0) delete meta.annotations;
  };
  strip(copy.metadata);
  strip((copy as { spec?: { template?: { metadata?: Obj['metadata'] } } }).spec?.template?.metadata);
  return copy;
}

async function renderChart(args: readonly string[] = []): Promise<Obj[]> {
  const { stdout } = await helm(['template', 'sless', 'deploy/chart', '--namespace', 'sless-system', ...args]);
  return parseObjects(stdout);
}

async function dryRun(objects: readonly Obj[], dir: string, name: string): Promise<{ stdout: string; stderr: string }> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  // --force-conflicts: cluster-scoped objects (ClusterRoles, admission policies) may already be applied by
  // another test file sharing the API server (kube-platform-deploy.test.ts) under its own field manager;
  // a dry run asks only whether the server accepts these objects, not who owns their fields.
  return kubectl(['apply', '--dry-run=server', '--server-side', '--force-conflicts', '--field-manager', 'sless-deploy-chart-test', '-f', file]);
}

describe('deploy/chart and deploy/quickstart', () => {
  let work: string;
  let kustomized: Obj[];
  let charted: Obj[];
  let quickstart: Obj[];

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'sless-deploy-chart-'));
    kustomized = parseObjects((await kubectl(['kustomize', 'deploy/'])).stdout);
    charted = await renderChart();
    quickstart = parseObjects((await kubectl(['kustomize', 'deploy/quickstart/'])).stdout);
    // Namespaced objects can only be dry-run into namespaces that exist.
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['sless-system', 'sless-builds']) {
      await core.createNamespace({ body: { metadata: { name } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    }
  });
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('passes helm lint --strict with no warning', async () => {
    const { stdout, stderr } = await helm(['lint', '--strict', 'deploy/chart']);
    const out = `${stdout}${stderr}`;
    assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/, out);
    assert.doesNotMatch(out, /\[(WARNING|ERROR)\]/, out);
  });

  it("carries crds/ unchanged (files/crds/ are copies: cp crds/*.yaml deploy/chart/files/crds/)", async () => {
    const crds = (await readdir(path.join(root, 'crds'))).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
    const copies = (await readdir(path.join(chart, 'files', 'crds'))).sort();
    assert.deepEqual(copies, crds);
    for (const f of crds) {
      const [a, b] = await Promise.all([readFile(path.join(root, 'crds', f), 'utf8'), readFile(path.join(chart, 'files', 'crds', f), 'utf8')]);
      assert.equal(b, a, `deploy/chart/files/crds/${f} differs from crds/${f}: cp crds/${f} deploy/chart/files/crds/`);
    }
  });

  it('renders with its default values the objects kubectl kustomize deploy/ renders (all but the release Namespace)', () => {
    const fromKustomize = new Map(kustomized.map((o) => [keyOf(o), o]));
    const fromChart = new Map(charted.map((o) => [keyOf(o), withoutHelmMarks(o)]));
    assert.deepEqual([...fromChart.keys()].sort(), [...fromKustomize.keys()].filter((k) => k !== 'Namespace sless-system').sort());
    for (const [key, o] of fromChart) assert.deepEqual(o, fromKustomize.get(key), key);
    // And only Helm's marks differ: every object keeps the label kubectl delete -l selects.
    for (const o of charted) assert.equal(o.metadata.labels?.['app.kubernetes.io/part-of'], 'sless', keyOf(o));
  });

  it('is accepted by the API server in both forms (server-side dry run)', async () => {
    const chartRun = await dryRun(charted, work, 'chart');
    assert.match(chartRun.stdout, /statefulset\.apps\/sless-controller serverside-applied \(server dry run\)/, chartRun.stdout);
    assert.match(chartRun.stdout, /validatingadmissionpolicy\.admissionregistration\.k8s\.io\/sless-controller-tenant-bindings serverside-applied/, chartRun.stdout);
    const kustomizeRun = await kubectl(['apply', '--dry-run=server', '-k', 'deploy/']);
    assert.match(kustomizeRun.stdout, /statefulset\.apps\/sless-controller (created|configured|unchanged) \(server dry run\)/, kustomizeRun.stdout);
  });

  it('refuses a mistyped value, naming it (values.schema.json)', async () => {
    await assert.rejects(helm(['template', 'sless', 'deploy/chart', '--set', 'replica=3']), (err: { stderr?: string }) => {
      assert.match(err.stderr ?? '', /additional properties 'replica' not allowed/);
      return true;
    });
  });

  it('follows renamed namespaces everywhere they are written (RBAC, admission policy, settings)', async () => {
    const objects = await helm(['template', 'sless', 'deploy/chart', '--namespace', 'platform', '--set', 'buildNamespace.name=fn-builds']).then((r) => parseObjects(r.stdout));
    const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as Obj & Record<string, never>;
    const policy = find('ValidatingAdmissionPolicy', 'sless-controller-tenant-bindings') as unknown as {
      spec: { matchConditions: Array<{ expression: string }>; validations: Array<{ expression: string }> };
    };
    assert.equal(policy.spec.matchConditions[0]?.expression, "request.userInfo.username == 'system:serviceaccount:platform:sless-controller'");
    for (const name of ['sless-controller-preview-namespaces', 'sless-controller-preview-limits']) {
      const other = find('ValidatingAdmissionPolicy', name) as unknown as typeof policy;
      assert.equal(other.spec.matchConditions[0]?.expression, "request.userInfo.username == 'system:serviceaccount:platform:sless-controller'", name);
    }
    assert.equal(policy.spec.validations[0]?.expression, "!(request.namespace in ['platform', 'fn-builds', 'kube-system', 'kube-public', 'kube-node-lease'])");
    for (const o of objects.filter((x) => x.kind === 'ClusterRoleBinding' || x.kind === 'RoleBinding')) {
      assert.deepEqual((o as unknown as { subjects: Array<{ namespace: string }> }).subjects.map((s) => s.namespace), ['platform'], keyOf(o));
    }
    assert.equal(find('Role', 'sless-controller-builds').metadata.namespace, 'fn-builds');
    assert.equal(find('NetworkPolicy', 'sless-builds').metadata.namespace, 'fn-builds');
    assert.ok(objects.some((o) => o.kind === 'Namespace' && o.metadata.name === 'fn-builds'));
    const config = find('ConfigMap', 'sless-controller-config') as unknown as { data: Record<string, string> };
    assert.equal(config.data.SLESS_BUILD_NAMESPACE, 'fn-builds');
  });

  it('renders the optional pieces from values: an Ingress with TLS, an HTTPRoute, an existing Secret, no claims', async () => {
    const objects = await renderChart([
      '--set', 'ingress.enabled=true', '--set', 'ingress.className=nginx', '--set', 'ingress.tlsSecretName=sless-tls',
      '--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public',
      '--set', 'secret.existingSecret=my-secrets', '--set', 'gitCache.persistence.enabled=false', '--set', 'image.digest=sha256:' + '0'.repeat(64),
    ]);
    const ingress = objects.find((o) => o.kind === 'Ingress') as unknown as { spec: { ingressClassName: string; tls: Array<{ hosts: string[]; secretName: string }> } };
    assert.deepEqual(ingress.spec.tls, [{ hosts: ['fn.example.com'], secretName: 'sless-tls' }]);
    assert.equal(ingress.spec.ingressClassName, 'nginx');
    const route = objects.find((o) => o.kind === 'HTTPRoute') as unknown as { spec: { parentRefs: Array<{ name: string }>; hostnames: string[] } };
    assert.deepEqual(route.spec.parentRefs, [{ name: 'public' }]);
    assert.deepEqual(route.spec.hostnames, ['fn.example.com']);
    assert.ok(!objects.some((o) => o.kind === 'Secret'), 'no Secret: the existing one is used');
    const sts = objects.find((o) => o.kind === 'StatefulSet') as unknown as {
      spec: { volumeClaimTemplates?: unknown; template: { spec: { volumes: Array<{ name: string; emptyDir?: object }>; containers: Array<{ image: string; envFrom: Array<{ secretRef?: { name: string } }> }> } } };
    };
    assert.equal(sts.spec.volumeClaimTemplates, undefined);
    assert.ok(sts.spec.template.spec.volumes.some((v) => v.name === 'git-cache' && v.emptyDir));
    assert.equal(sts.spec.template.spec.containers[0]?.image, `ghcr.io/kube5s/sless-controller@sha256:${'0'.repeat(64)}`);
    assert.ok(sts.spec.template.spec.containers[0]?.envFrom.some((e) => e.secretRef?.name === 'my-secrets'));
    // The Gateway API's CRDs are not in the test cluster: the Ingress alone goes to the API server.
    const run = await dryRun(objects.filter((o) => o.kind === 'Ingress'), work, 'ingress');
    assert.match(run.stdout, /ingress\.networking\.k8s\.io\/sless-controller serverside-applied \(server dry run\)/, run.stdout);
  });

  describe('the quickstart overlay', () => {
    const find = (kind: string, name: string) => {
      const o = quickstart.find((x) => x.kind === kind && x.metadata.name === name);
      assert.ok(o, `${kind} ${name} is rendered`);
      return o as Obj & Record<string, never>;
    };

    it('is the controller install plus SeaweedFS, a bucket Job and a registry', () => {
      const keys = new Set(quickstart.map(keyOf));
      for (const o of kustomized) assert.ok(keys.has(keyOf(o)), `${keyOf(o)} of deploy/ is in the quickstart`);
      for (const k of ['Deployment sless-system/seaweedfs', 'Service sless-system/seaweedfs', 'Job sless-system/seaweedfs-bucket', 'Deployment sless-system/registry', 'Service sless-system/registry']) {
        assert.ok(keys.has(k), `${k} in ${[...keys].join(', ')}`);
      }
    });

    it('gives the controller settings that point at them and load as a controller configuration', () => {
      const config = find('ConfigMap', 'sless-controller-config') as unknown as { data: Record<string, string> };
      const secret = find('Secret', 'sless-controller-secrets') as unknown as { stringData: Record<string, string> };
      const settings = loadControllerConfig([], { ...config.data, ...secret.stringData, POD_NAMESPACE: 'sless-system', POD_NAME: 'x' });
      assert.ok(settings.jwtSecret, 'tokens are verified with an HS256 secret (sless token signs with it)');
      assert.equal(settings.jwksUrl, undefined);

      // S3: the endpoint is the SeaweedFS Service, the keys are an identity of its s3.json, the Job makes the bucket.
      const s3 = new URL(settings.s3Endpoint ?? '');
      assert.equal(s3.hostname, 'seaweedfs.sless-system.svc');
      const service = find('Service', 'seaweedfs') as unknown as { spec: { ports: Array<{ port: number }> } };
      assert.ok(service.spec.ports.some((p) => String(p.port) === s3.port));
      const identities = JSON.parse((find('Secret', 'seaweedfs-s3') as unknown as { stringData: { 's3.json': string } }).stringData['s3.json']) as {
        identities: Array<{ credentials: Array<{ accessKey: string; secretKey: string }> }>;
      };
      assert.ok(identities.identities.some((i) => i.credentials.some((c) => c.accessKey === settings.awsAccessKeyId && c.secretKey === settings.awsSecretAccessKey)));
      const job = find('Job', 'seaweedfs-bucket') as unknown as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
      assert.match(job.spec.template.spec.containers[0]!.args.join(' '), new RegExp(`s3\\.bucket\\.create -name ${settings.s3Bucket}\\b`));

      // The registry: one name for every client, the Service's DNS name and port; its NodePort is what containerd is told.
      const registryService = find('Service', 'registry') as unknown as { spec: { type: string; ports: Array<{ port: number; nodePort: number }> } };
      const registryHost = `registry.sless-system.svc.${settings.clusterDomain}:${registryService.spec.ports[0]!.port}`;
      assert.ok(settings.registry.startsWith(`${registryHost}/`), settings.registry);
      assert.ok(settings.runtimeImagePrefix.startsWith(`${registryHost}/`), settings.runtimeImagePrefix);
      const sts = find('StatefulSet', 'sless-controller') as unknown as { spec: { replicas: number; template: { spec: { containers: Array<{ image: string }> } } } };
      assert.ok(sts.spec.template.spec.containers[0]!.image.startsWith(`${registryHost}/`), sts.spec.template.spec.containers[0]!.image);
      assert.equal(sts.spec.replicas, 1);
      assert.equal(registryService.spec.type, 'NodePort');
      assert.equal(registryService.spec.ports[0]!.nodePort, 30500);
    });

    it("tells containerd (kind's hosts.toml, k3s' registries.yaml) the registry's name and NodePort, and kind publishes that port", async () => {
      const registryService = find('Service', 'registry') as unknown as { spec: { ports: Array<{ port: number; nodePort: number }> } };
      const { port, nodePort } = registryService.spec.ports[0]!;
      const name = `registry.sless-system.svc.cluster.local:${port}`;
      const dir = path.join(root, 'deploy', 'quickstart');
      const hostsToml = await readFile(path.join(dir, 'hosts.toml'), 'utf8');
      assert.match(hostsToml, new RegExp(`^server = "http://${name.replaceAll('.', '\\.')}"$`, 'm'));
      assert.match(hostsToml, new RegExp(`^\\[host\\."http://localhost:${nodePort}"\\]$`, 'm'));
      const k3s = parseAllDocuments(await readFile(path.join(dir, 'k3s-registries.yaml'), 'utf8'))[0]!.toJS() as { mirrors: Record<string, { endpoint: string[] }> };
      assert.deepEqual(k3s.mirrors, { [name]: { endpoint: [`http://localhost:${nodePort}`] } });
      const kind = parseAllDocuments(await readFile(path.join(dir, 'kind.yaml'), 'utf8'))[0]!.toJS() as { nodes: Array<{ extraPortMappings: Array<{ containerPort: number; hostPort: number }> }> };
      assert.equal(kind.nodes[0]?.extraPortMappings[0]?.containerPort, nodePort);
      const readme = await readFile(path.join(dir, 'README.md'), 'utf8');
      assert.ok(readme.includes(`dir=/etc/containerd/certs.d/${name}`), 'README copies hosts.toml where containerd looks for that name');
      assert.ok(readme.includes(`--registry localhost:${kind.nodes[0]?.extraPortMappings[0]?.hostPort}/sless`), 'README pushes to the port kind publishes');
    });

    it('labels the S3 and registry pods so the build NetworkPolicy lets builds reach them', () => {
      for (const name of ['seaweedfs', 'registry']) {
        const d = find('Deployment', name) as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } };
        assert.equal(d.spec.template.metadata.labels['sless.kube5s.ru/build-egress'], 'allow', name);
      }
    });

    it('is accepted by the API server, its pods within the restricted Pod Security Standard of sless-system', async () => {
      const run = await dryRun(quickstart, work, 'quickstart');
      assert.match(run.stdout, /deployment\.apps\/seaweedfs serverside-applied \(server dry run\)/, run.stdout);
      assert.match(run.stdout, /job\.batch\/seaweedfs-bucket serverside-applied \(server dry run\)/, run.stdout);
      // sless-system enforces `restricted` (deploy/base/namespace.yaml); the API server warns of a workload
      // whose pods that would refuse. A namespace of its own with that label, so no other test's is changed.
      let ns: TestNamespace | undefined;
      try {
        ns = await freshNamespace(testKubeConfig(), 'quickstart-pss');
        await kubectl(['label', 'namespace', ns.name, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
        const workloads = quickstart
          .filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind))
          .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns!.name } }));
        const pss = await dryRun(workloads, work, 'quickstart-pss');
        assert.doesNotMatch(pss.stderr, /would violate PodSecurity/, pss.stderr);
        assert.equal(workloads.length, 4);
      } finally {
        await ns?.cleanup();
      }
    });
  });
});
