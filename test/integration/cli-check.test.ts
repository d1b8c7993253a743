// `sless check` against a real API server, a real S3 server and a real registry (docker-registry with
// htpasswd auth): green when every piece is there, then red with the right line and fix when S3 is
// down, a CRD is missing, an image is absent or the push Secret's password is wrong; --pre before an
// install. The installed pieces are what deploy/ creates, in fresh namespaces: the controller's
// ConfigMap, Secret and StatefulSet (its pod marked Ready: no kubelet here) with a real LeaderElector
// holding the Lease, the build namespace with deploy/build-network-policy.yaml and the push Secret.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { baseImageOf, buildToolsImageOf } from '../../src/build/runtime-catalog.ts';
import type { CheckResult } from '../../src/check/check-result.ts';
import { kubeReader } from '../../src/check/kube-reader.ts';
import { runChecks } from '../../src/cli/check.ts';
import { RUNTIMES } from '../../src/manifest/types.ts';
import { LeaderElector } from '../../src/platform/kubernetes/leader-election.ts';
import { CONTENT_TYPES, JsonApi } from '../../src/platform/kubernetes/api-client/json-api.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { pushTinyImage, startLocalRegistry, type LocalRegistry } from '../helpers/local-registry.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const byName = (results: CheckResult[], name: string | RegExp): CheckResult => {
  const r = results.find((x) => (typeof name === 'string' ? x.name === name : name.test(x.name)));
  assert.ok(r, `a line for ${String(name)} in:\n${results.map((x) => x.name).join('\n')}`);
  return r;
};
const failures = (results: CheckResult[]) => results.filter((r) => !r.ok);
const show = (results: CheckResult[]) => results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}${r.fix ? ` | fix: ${r.fix}` : ''}`).join('\n');

describe('sless check', { timeout: 300_000 }, () => {
  const kc = testKubeConfig();
  const api = new JsonApi(kc);
  const kube = kubeReader(kc);
  let system: TestNamespace;
  let builds: TestNamespace;
  let s3: S3Server;
  let registry: LocalRegistry;
  let elector: LeaderElector | undefined;
  let crds: string;
  let prefix: string;
  let configData: Record<string, string> = {};
  let secretData: Record<string, string> = {};
  const check = (crdsDir = crds) => runChecks({ kube, namespace: system.name, pre: false, settingsFrom: 'cluster', crdsDir });

  before(async () => {
    [system, builds, s3, registry] = await Promise.all([freshNamespace(kc, 'check-system'), freshNamespace(kc, 'check-builds'), startS3Server(), startLocalRegistry({ auth: true })]);
    crds = await mkdtemp(path.join(os.tmpdir(), 'sless-check-crds-'));
    for (const f of await readdir(path.join(root, 'crds'))) await copyFile(path.join(root, 'crds', f), path.join(crds, f));
    // Every image the settings name, and the controller's.
    prefix = `${registry.address}/sless`;
    const images = [`${prefix}/kaniko:test`, buildToolsImageOf(prefix), ...RUNTIMES.map((r) => baseImageOf(r, prefix)), `${prefix}/sless-controller:test`];
    for (const image of images) {
      const [repo = '', tag = ''] = image.slice(registry.address.length + 1).split(':');
      await pushTinyImage(registry.address, repo, tag, registry.credentials);
    }
    const ns = (n: string) => `/api/v1/namespaces/${n}`;
    await api.send('POST', `${ns(builds.name)}/secrets`, dockerConfigSecret('sless-registry', registry.address, registry.credentials!.password));
    const policyFile = ['deploy/base/build-network-policy.yaml', 'deploy/build-network-policy.yaml'].map((f) => path.join(root, f)).find((f) => existsSync(f)) ?? '';
    const policy = parseYaml(await readFile(policyFile, 'utf8')) as { metadata: { namespace: string } };
    policy.metadata.namespace = builds.name;
    await api.send('POST', `/apis/networking.k8s.io/v1/namespaces/${builds.name}/networkpolicies`, policy);
    await api.send('POST', `${ns(system.name)}/configmaps`, {
      metadata: { name: 'sless-controller-config' },
      data: (configData = {
        SLESS_S3_ENDPOINT: s3.endpoint,
        SLESS_S3_BUCKET: s3.bucket,
        SLESS_S3_REGION: s3.region,
        SLESS_REGISTRY: `${registry.address}/functions`,
        SLESS_RUNTIME_IMAGE_PREFIX: prefix,
        SLESS_KANIKO_IMAGE: `${prefix}/kaniko:test`,
        SLESS_BUILD_NAMESPACE: builds.name,
        SLESS_JWT_ISSUER: 'https://sless.example',
        SLESS_JWT_AUDIENCE: 'sless',
      }),
    });
    await api.send('POST', `${ns(system.name)}/secrets`, {
      metadata: { name: 'sless-controller-secrets' },
      stringData: (secretData = { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey, SLESS_JWT_SECRET: randomBytes(32).toString('hex') }),
    });
    const labels = { 'app.kubernetes.io/name': 'sless-controller' };
    await api.send('POST', `/apis/apps/v1/namespaces/${system.name}/statefulsets`, {
      metadata: { name: 'sless-controller' },
      spec: {
        replicas: 1,
        serviceName: 'sless-controller',
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'controller',
                image: `${prefix}/sless-controller:test`,
                envFrom: [{ configMapRef: { name: 'sless-controller-config' } }, { secretRef: { name: 'sless-controller-secrets' } }],
              },
            ],
          },
        },
      },
    });
    // No kubelet runs here: a pod of the controller's, marked Ready as a kubelet would.
    await api.send('POST', `${ns(system.name)}/pods`, { metadata: { name: 'sless-controller-check', labels }, spec: { containers: [{ name: 'controller', image: `${prefix}/sless-controller:test` }] } });
    await api.send('PATCH', `${ns(system.name)}/pods/sless-controller-check/status`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, CONTENT_TYPES.merge);
    let leading = false;
    elector = new LeaderElector({ kubeConfig: kc, namespace: system.name, identity: 'sless-controller-check', onStartedLeading: () => void (leading = true), onStoppedLeading: () => void (leading = false) });
    elector.start();
    await eventually(() => assert.ok(leading, 'the elector leads'), { timeoutMs: 20_000 });
  });

  after(async () => {
    await elector?.stop();
    await Promise.all([system?.cleanup(), builds?.cleanup(), s3?.dispose(), registry?.stop(), crds ? rm(crds, { recursive: true, force: true }) : undefined]);
  });

  it('is green, exit 0, when every piece is there', async () => {
    const results = await check();
    assert.deepEqual(failures(results), [], show(results));
    assert.match(byName(results, `controller (${system.name})`).detail, /1 of 1 replicas Ready/);
    assert.match(byName(results, 'controller leader').detail, /sless-controller-check/);
    assert.match(byName(results, `registry ${registry.address}`).detail, /accepts the push Secret .*sless-registry \(basic\)/);
    assert.match(byName(results, /^S3 /).detail, /probe object was written and deleted/);
    assert.equal(results.filter((r) => r.name.startsWith('runtime image ')).length, RUNTIMES.length);
    assert.match(byName(results, '/v1 auth').detail, /HS256 secret/);

    // Not spawnSync: this process's LeaderElector must keep renewing the Lease while the CLI runs (in CI,
    // under load, a blocked event loop let the Lease lapse before the CLI read it).
    const cli = await promisify(execFile)(process.execPath, [path.join(root, 'bin/sless.js'), 'check', '--kubeconfig', process.env.SLESS_TEST_KUBECONFIG ?? '', '--namespace', system.name], {
      encoding: 'utf8',
      timeout: 120_000,
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) => assert.fail(`sless check exited ${String(err.code)}: ${err.stdout ?? ''}${err.stderr ?? ''}`));
    assert.match(cli.stdout, /^\u2714 Kubernetes version: v1\.\d+/m);
    assert.match(cli.stdout, /^all \d+ checks passed$/m);
    assert.doesNotMatch(cli.stdout, /\u2716/);
  });

  it('--settings-from env: the same settings from this shell are green too; a bad one is red naming it', async () => {
    const env = { ...configData, ...secretData, POD_NAMESPACE: system.name };
    const green = await runChecks({ kube, namespace: system.name, pre: false, settingsFrom: 'env', crdsDir: crds, env });
    assert.deepEqual(failures(green), [], show(green));
    assert.match(byName(green, 'controller settings').detail, /this shell's environment/);
    const red = await runChecks({ kube, namespace: system.name, pre: false, settingsFrom: 'env', crdsDir: crds, env: { ...env, SLESS_S3_BUCKET: undefined } });
    assert.deepEqual(failures(red).map((r) => `${r.name}: ${r.detail}`), ["controller settings: from this shell's environment: missing setting SLESS_S3_BUCKET: S3 bucket for build contexts"]);
  });

  it('is red on the S3 line, naming the S3 settings, while S3 is down', async () => {
    await s3.stop();
    try {
      const results = await check();
      assert.deepEqual(failures(results).map((r) => r.name), [`S3 s3://${s3.bucket} at ${s3.endpoint}`], show(results));
      assert.match(failures(results)[0]?.fix ?? '', /SLESS_S3_ENDPOINT, SLESS_S3_BUCKET/);
    } finally {
      await s3.start();
    }
  });

  it('is red when a CRD of crds/ is missing from the cluster', async () => {
    const extra = await mkdtemp(path.join(os.tmpdir(), 'sless-check-crds-'));
    try {
      for (const f of await readdir(crds)) await copyFile(path.join(crds, f), path.join(extra, f));
      const text = (await readFile(path.join(crds, 'trigger.yaml'), 'utf8')).replaceAll('sless.kube5s.ru', 'check-missing.sless.kube5s.ru');
      await writeFile(path.join(extra, 'zz-missing.yaml'), text);
      const results = await check(extra);
      const missing = failures(results);
      assert.equal(missing.length, 1, show(results));
      assert.match(missing[0]!.name, /^CRD triggers\.check-missing\.sless\.kube5s\.ru$/);
      assert.equal(missing[0]!.detail, 'missing');
      assert.match(missing[0]!.fix ?? '', /kubectl apply -k deploy\/.*crds\/zz-missing\.yaml/);
    } finally {
      await rm(extra, { recursive: true, force: true });
    }
  });

  it('is red on the image that is absent from the registry, naming SLESS_RUNTIME_IMAGE_PREFIX', async () => {
    const image = baseImageOf('go1.23', prefix);
    const [repo = '', tag = ''] = image.slice(registry.address.length + 1).split(':');
    const auth = { authorization: `Basic ${Buffer.from(`${registry.credentials!.username}:${registry.credentials!.password}`).toString('base64')}` };
    const head = await fetch(`http://${registry.address}/v2/${repo}/manifests/${tag}`, { method: 'HEAD', headers: { ...auth, accept: 'application/vnd.oci.image.manifest.v1+json' } });
    const digest = head.headers.get('docker-content-digest') ?? '';
    assert.equal((await fetch(`http://${registry.address}/v2/${repo}/manifests/${digest}`, { method: 'DELETE', headers: auth })).status, 202);
    try {
      const results = await check();
      assert.deepEqual(failures(results).map((r) => r.name), ['runtime image go1.23'], show(results));
      assert.equal(failures(results)[0]?.detail, `${image} is not in ${registry.address}`);
      assert.match(failures(results)[0]?.fix ?? '', /SLESS_RUNTIME_IMAGE_PREFIX; push them with scripts\/images\.sh --registry/);
    } finally {
      await pushTinyImage(registry.address, repo, tag, registry.credentials);
    }
  });

  it('is red on the registry line when the push Secret holds a wrong password', async () => {
    await api.send('DELETE', `/api/v1/namespaces/${builds.name}/secrets/sless-registry`);
    await api.send('POST', `/api/v1/namespaces/${builds.name}/secrets`, dockerConfigSecret('sless-registry', registry.address, 'wrong-password'));
    try {
      const results = await check();
      const registryLine = byName(results, `registry ${registry.address}`);
      assert.equal(registryLine.ok, false, show(results));
      assert.match(registryLine.detail, /refuses the credentials of Secret .*sless-registry \(401\)/);
      assert.match(registryLine.fix ?? '', /kubectl -n .* create secret docker-registry sless-registry/);
    } finally {
      await api.send('DELETE', `/api/v1/namespaces/${builds.name}/secrets/sless-registry`);
      await api.send('POST', `/api/v1/namespaces/${builds.name}/secrets`, dockerConfigSecret('sless-registry', registry.address, registry.credentials!.password));
    }
  });

  it('--pre: the version, the admission policy API and the install rights', async () => {
    const results = await runChecks({ kube, namespace: system.name, pre: true, settingsFrom: 'cluster' });
    assert.ok(byName(results, 'Kubernetes version').ok);
    assert.ok(byName(results, 'ValidatingAdmissionPolicy API').ok, show(results));
    assert.ok(byName(results, 'install rights').ok, show(results));
    // The test API server has no StorageClass: the StatefulSet's git-cache claim would stay Pending.
    const storage = byName(results, 'default StorageClass');
    assert.equal(storage.ok, false);
    assert.match(storage.fix ?? '', /storageClassName/);
  });
});

function dockerConfigSecret(name: string, registry: string, password: string): object {
  const auth = Buffer.from(`sless:${password}`).toString('base64');
  return { metadata: { name }, type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry]: { auth } } }) } };
}
