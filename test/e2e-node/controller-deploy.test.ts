// The install a user makes, on the real node (issue 30, "Show"): the images pushed by scripts/images.sh
// (kaniko compiled from source and run in runc on this host; the bases are the local equivalents of the
// upstream images, test/images/, given with --base; the controller's `npm ci` trusts this machine's
// TLS-proxy CA through --ca-file). kaniko, build-tools and the runtime images come from test/images/'s
// cache, and --skip-present keeps them: only the controller, this commit's code, is built per run (a
// full run is recorded in docs/testing.md). Then `kubectl apply -k` of deploy/ through the test overlay
// (test/e2e-node/deploy/) plus this run's values (the images and settings the script printed). Two
// replicas run as pods with their ServiceAccount and RBAC. `sless check` is green; a token minted by
// `sless token` for a team's subject owns the namespace sless-<hash> that the team's FunctionRepository
// lives in; a function pushed to the test git server is built by the deployed controller in sless-builds
// and /fn is called through the controller's Service. Then `sless check` is red on the right line while
// S3 is down (this file's own S3 server, stopped), when a CRD is missing and when an image is absent
// from the registry. Last, the kustomize form is removed (not the CRDs) and the Helm chart installed
// with the same values: `sless check` green and the function served through the chart's Service.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { baseImageOf } from '../../src/build/runtime-catalog.ts';
import { kubeReader } from '../../src/check/kube-reader.ts';
import { runChecks } from '../../src/cli/check.ts';
import { nodeBinaryPaths } from '../cluster/node/node-cluster.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { helm } from '../helpers/helm.ts';
import { eventually, testKubeConfig } from '../helpers/kube.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { localImages, pushTestImages } from '../images/images.ts';
import { registryManifestStatus, requireNode } from './node-kit.ts';
import { podLogs } from './sless-kit.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const overlay = fileURLToPath(new URL('./deploy', import.meta.url));
const npmBin = path.join(repoRoot, 'node_modules', '.bin');

/** The image deploy/ ships (its kustomization renames `sless-controller` to it): an overlay's
 * images transformer sees the renamed image, so it must match that name, not the base one. */
async function deployedImageName(): Promise<string> {
  const k = parseYaml(await readFile(path.join(repoRoot, 'deploy', 'kustomization.yaml'), 'utf8')) as { images?: Array<{ name: string; newName?: string }> };
  const image = k.images?.find((i) => i.name === 'sless-controller');
  return image?.newName ?? 'sless-controller';
}
const GROUP = 'sless.kube5s.ru';
const SYSTEM = 'sless-system';
const BUILDS = 'sless-builds';
const CONTROLLER = 'app.kubernetes.io/name=sless-controller';
/** The test base image standing in for each --base KEY's upstream image (test/images/README.md). */
const TEST_BASES: Record<string, string> = {
  'python3.11': 'sless-test-base-python3.11',
  'python3.12': 'sless-test-base-python3.12',
  nodejs20: 'sless-test-base-node20',
  nodejs22: 'sless-test-base-node22',
  'go1.23': 'sless-test-base-go1.23',
  'build-tools': 'sless-test-base-go1.23',
  controller: 'sless-test-base-node22',
};
/** The kaniko fork the test images use (test/images/README.md: the default fork is not on the Go module proxy here). */
const KANIKO_SOURCE = 'go:github.com/chainguard-dev/kaniko@v1.25.0';

/** `sless <args>` as a user runs it, from bin/sless.js. */
function sless(args: string[], env: Record<string, string | undefined> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'sless.js'), ...args], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('sless installed as docs/install.md says, on the real node', { timeout: 3_600_000 }, () => {
  const kc = testKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const kubectl = (...args: string[]) =>
    run(nodeBinaryPaths().kubectl, args, { env: { ...process.env, KUBECONFIG: process.env.SLESS_TEST_KUBECONFIG }, maxBuffer: 16 * 1024 * 1024 });
  const kubeconfig = process.env.SLESS_TEST_KUBECONFIG ?? '';
  // The team's subject, and the namespace its tokens own: where its FunctionRepository goes.
  const subject = `team-${randomBytes(4).toString('hex')}@e2e.example`;
  const tenant = namespaceForSubject(subject);
  const jwtSecret = randomBytes(32).toString('hex');
  let work: string;
  let s3: S3Server;
  let prefix: string;
  let settings: Record<string, string> = {};
  let controllerImage: string | undefined;

  before(async () => {
    const { hostAddress, registry } = requireNode();
    work = await mkdtemp(path.join(os.tmpdir(), 'sless-install-'));
    await core.createNamespace({ body: { metadata: { name: tenant, labels: { 'sless-test': 'true' } } } });
    // S3 of this install only, on the node's bridge address (build pods fetch contexts from it): stopped for the red case.
    s3 = await startS3Server({ host: hostAddress, bucket: 'sless-contexts' });
    prefix = `${registry}/e2e-install-${randomBytes(3).toString('hex')}`;
  });
  after(async () => {
    // Not `kubectl delete -k`: that would delete the CRDs under the other test files running beside this one.
    await kubectl('delete', 'namespace', SYSTEM, BUILDS, tenant, '--ignore-not-found', '--wait=false').catch(() => undefined);
    await kubectl(
      'delete',
      'clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding',
      '-l',
      'app.kubernetes.io/part-of=sless',
      '--ignore-not-found',
    ).catch(() => undefined);
    await s3?.dispose();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('scripts/images.sh builds the controller, keeps the images the registry has, pushes and prints the settings', async () => {
    const { registry } = requireNode();
    // The upstream bases' local equivalents, into the registry for kaniko to pull (a mirror, as docs/install.md says).
    const local = await localImages();
    const bases: string[] = [];
    const pushed = new Map<string, string>();
    for (const [key, name] of Object.entries(TEST_BASES)) {
      let ref = pushed.get(name);
      if (!ref) {
        const image = local.find((i) => i.name === name);
        assert.ok(image, `test/images/build.sh lists ${name}`);
        ref = `${registry}/e2e-install-bases/${name}:${image.layoutTag}`;
        await run('skopeo', ['copy', '-q', '--dest-tls-verify=false', `oci:${image.layout}:${image.layoutTag}`, `docker://${ref}`], { maxBuffer: 4 * 1024 * 1024 });
        pushed.set(name, ref);
      }
      bases.push('--base', `${key}=${ref}`);
    }
    // kaniko, sless-build-tools and the runtime images as test/images/build.sh built them (the same
    // Dockerfiles, built by the same kaniko-in-runc, cached by pinned version) under the names
    // scripts/images.sh gives them: with --skip-present it keeps them and builds only the controller,
    // the image of this commit's code. A full run of every image is in docs/testing.md (~6 min).
    await pushTestImages(prefix);
    const started = Date.now();
    const script = await run(
      'bash',
      [path.join(repoRoot, 'scripts', 'images.sh'), '--registry', prefix, '--insecure', '--kaniko-source', KANIKO_SOURCE, '--ca-file', '/etc/ssl/certs/ca-certificates.crt', '--skip-present', ...bases],
      { env: { ...process.env, PATH: `${npmBin}:${process.env.PATH ?? ''}` }, maxBuffer: 64 * 1024 * 1024, timeout: 2_400_000 },
    ).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`scripts/images.sh failed:\n${(err.stderr ?? '').slice(-6000)}\n${err.stdout ?? ''}`, { cause: err });
    });
    console.log(`scripts/images.sh: ${Math.round((Date.now() - started) / 1000)} s\n${script.stderr.split('\n').filter((l) => /built and pushed|pushed |not rebuilt/.test(l)).join('\n')}`);
    assert.equal(script.stderr.match(/not rebuilt \(--skip-present\)/g)?.length, 7, `kaniko, build-tools and 5 runtimes kept:\n${script.stderr}`);
    settings = Object.fromEntries(
      script.stdout
        .split('\n')
        .filter((l) => /^SLESS_[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    assert.deepEqual(Object.keys(settings).sort(), ['SLESS_BUILD_TOOLS_IMAGE', 'SLESS_KANIKO_IMAGE', 'SLESS_RUNTIME_IMAGE_PREFIX']);
    assert.equal(settings.SLESS_RUNTIME_IMAGE_PREFIX, prefix);
    controllerImage = /^# controller image: (\S+@sha256:[0-9a-f]{64})$/m.exec(script.stdout)?.[1];
    assert.ok(controllerImage, script.stdout);
    for (const image of [settings.SLESS_KANIKO_IMAGE!, settings.SLESS_BUILD_TOOLS_IMAGE!, controllerImage, ...(['python3.11', 'python3.12', 'nodejs20', 'nodejs22', 'go1.23'] as const).map((r) => baseImageOf(r, prefix))]) {
      assert.equal(await registryManifestStatus(image), 200, `the registry has ${image}`);
    }
  });

  it('installs with kubectl apply -k: two replicas Ready, and sless check is green', async () => {
    assert.ok(controllerImage, 'the images were pushed (previous test)');
    const { registry, hostAddress } = requireNode();
    const [imageName, imageDigest] = controllerImage.split('@') as [string, string];
    // This run's values over the test overlay.
    const dir = path.join(work, 'overlay');
    await mkdir(dir, { recursive: true });
    const literals = (values: Record<string, string | undefined>): string[] => Object.entries(values).map(([k, v]) => `${k}=${v ?? ''}`);
    await writeFile(
      path.join(dir, 'kustomization.yaml'),
      JSON.stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [path.relative(dir, overlay)],
        images: [{ name: await deployedImageName(), newName: imageName, digest: imageDigest }],
        generatorOptions: { disableNameSuffixHash: true },
        configMapGenerator: [
          {
            name: 'sless-controller-config',
            namespace: SYSTEM,
            behavior: 'merge',
            literals: literals({
              SLESS_S3_ENDPOINT: s3.endpoint,
              SLESS_S3_BUCKET: s3.bucket,
              SLESS_S3_REGION: s3.region,
              SLESS_REGISTRY: `${registry}/deployed`,
              // What scripts/images.sh printed.
              ...settings,
              // The test git server and S3 listen on the node's bridge address, a private one.
              SLESS_GIT_ALLOWED_HOSTS: hostAddress,
              SLESS_PUBLIC_URL: `http://sless-controller.${SYSTEM}.svc`,
              // Other test files run their own controllers on this node at the same time: this one
              // reconciles only the team's namespace (it still serves /fn for every namespace).
              SLESS_WATCH_NAMESPACE: tenant,
            }),
          },
        ],
        secretGenerator: [
          {
            name: 'sless-controller-secrets',
            namespace: SYSTEM,
            behavior: 'merge',
            literals: literals({ AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey, SLESS_JWT_SECRET: jwtSecret }),
          },
        ],
      }),
    );
    await kubectl('apply', '--server-side', '--force-conflicts', '-k', dir);
    await eventually(
      async () => {
        const s = await apps.readNamespacedStatefulSet({ namespace: SYSTEM, name: 'sless-controller' });
        assert.equal(s.status?.readyReplicas, 2, await controllerState());
      },
      { timeoutMs: 300_000, intervalMs: 2_000 },
    );
    const pods = await core.listNamespacedPod({ namespace: SYSTEM, labelSelector: CONTROLLER });
    assert.equal(pods.items.length, 2);
    for (const p of pods.items) {
      assert.equal(p.spec?.serviceAccountName, 'sless-controller');
      assert.equal(p.spec?.containers[0]?.image, controllerImage);
      assert.equal(p.status?.containerStatuses?.[0]?.ready, true);
    }

    const check = await eventually(
      () => {
        const r = sless(['check', '--kubeconfig', kubeconfig, '--namespace', SYSTEM]);
        assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
        return r;
      },
      { timeoutMs: 60_000, intervalMs: 5_000 },
    );
    console.log(`sless check:\n${check.stdout}`);
    assert.match(check.stdout, /^\u2714 controller \(sless-system\): 2 of 2 replicas Ready/m);
    assert.match(check.stdout, /^\u2714 controller leader: sless-controller-[01] /m);
    assert.match(check.stdout, /^\u2714 controller image: .*@sha256:[0-9a-f]{64} is there$/m);
    assert.match(check.stdout, /^\u2714 build NetworkPolicy \(sless-builds\): sless-builds limits/m);
    assert.match(check.stdout, /^all \d+ checks passed$/m);
  });

  it("serves a pushed function through the installed controller; sless token's token owns the team's namespace", async () => {
    const repo = await createRepo(sharedGitServer(), 'e2e-install');
    const clone = await WorkClone.create(repo);
    try {
      await clone.write({
        'functions/hi/function.yaml': 'runtime: nodejs22\nentrypoint: handler.handle\n',
        'functions/hi/handler.js': "exports.handle = async () => ({ served: 'in-cluster' });\n",
      });
      await clone.commitAndPush('hi');
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: GROUP,
        version: 'v1alpha1',
        namespace: tenant,
        plural: 'functionrepositories',
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'FunctionRepository', metadata: { name: 'fns' }, spec: { url: repo.url, interval: '10s' } },
      });
      const base = await serviceUrl();
      let last = '';
      const res = await eventually(
        async () => {
          const r = await fetch(`${base}/fn/${tenant}/hi`, { signal: AbortSignal.timeout(10_000) });
          last = `${r.status} ${await r.clone().text()}`;
          assert.equal(r.status, 200, last);
          return r;
        },
        { timeoutMs: 600_000, intervalMs: 2_000 },
      ).catch(async (error: unknown) => {
        const fn = await kubectl('get', 'functions,functionrepositories', '-n', tenant, '-o', 'yaml').catch((err: unknown) => ({ stdout: String(err) }));
        throw new Error(`/fn/${tenant}/hi through the Service: ${last}\n${fn.stdout.slice(-4000)}\n${await controllerState()}`, { cause: error });
      });
      assert.deepEqual(await res.json(), { served: 'in-cluster' });
      const builds = await batch.listNamespacedJob({ namespace: BUILDS, labelSelector: `sless.kube5s.ru/function-namespace=${tenant},sless.kube5s.ru/function=hi` });
      assert.equal(builds.items.length, 1, 'one build Job, in the deployed build namespace');

      // The token as docs/install.md mints it: the controller's secret and the overlay's issuer and audience.
      const minted = sless(['token', '--subject', subject, '--ttl', '1h'], { SLESS_JWT_SECRET: jwtSecret, SLESS_JWT_ISSUER: 'https://auth.example.com/', SLESS_JWT_AUDIENCE: 'sless' });
      assert.equal(minted.status, 0, minted.stderr);
      assert.match(minted.stderr, new RegExp(`owns namespace ${tenant}`));
      const token = minted.stdout.trim();
      const list = await fetch(`${base}/v1/namespaces/${tenant}/functions`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(list.status, 200, await list.clone().text());
      assert.match(await list.text(), /"hi"/);
      assert.equal((await fetch(`${base}/v1/namespaces/${SYSTEM}/functions`, { headers: { authorization: `Bearer ${token}` } })).status, 403, 'not an admin: its namespace only');
      assert.equal((await fetch(`${base}/v1/namespaces/${tenant}/functions`)).status, 401);
    } finally {
      await clone.dispose();
    }
  });

  it('sless check is red on the right line: S3 down, a CRD missing, an image absent', async () => {
    const failed = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('\u2716'));
    // S3 down.
    await s3.stop();
    try {
      const r = sless(['check', '--kubeconfig', kubeconfig, '--namespace', SYSTEM]);
      assert.equal(r.status, 1, r.stdout);
      const lines = failed(r.stdout);
      assert.equal(lines.length, 1, r.stdout);
      assert.ok(lines[0]!.startsWith(`\u2716 S3 s3://${s3.bucket} at ${s3.endpoint}: cannot check the bucket`), r.stdout);
      assert.match(r.stdout, /ECONNREFUSED/);
      assert.match(r.stdout, /fix: SLESS_S3_ENDPOINT, SLESS_S3_BUCKET/);
    } finally {
      await s3.start();
    }

    // A CRD the release has and the cluster lacks (crds/ plus one under another group).
    const crds = path.join(work, 'crds');
    await mkdir(crds, { recursive: true });
    for (const f of await readdir(path.join(repoRoot, 'crds'))) await copyFile(path.join(repoRoot, 'crds', f), path.join(crds, f));
    await writeFile(path.join(crds, 'zz-missing.yaml'), (await readFile(path.join(crds, 'trigger.yaml'), 'utf8')).replaceAll('sless.kube5s.ru', 'e2e-missing.sless.kube5s.ru'));
    const withMissing = await runChecks({ kube: kubeReader(kc), namespace: SYSTEM, pre: false, settingsFrom: 'cluster', crdsDir: crds });
    assert.deepEqual(
      withMissing.filter((x) => !x.ok).map((x) => `${x.name}: ${x.detail}`),
      ['CRD triggers.e2e-missing.sless.kube5s.ru: missing'],
    );

    // An image absent: the go1.23 runtime image's manifest deleted from the registry (and put back after).
    const image = baseImageOf('go1.23', prefix);
    const { registry } = requireNode();
    const [repo = '', tag = ''] = image.slice(registry.length + 1).split(':');
    const accept = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';
    const manifest = await fetch(`http://${registry}/v2/${repo}/manifests/${tag}`, { headers: { accept } });
    const mediaType = manifest.headers.get('content-type') ?? '';
    const digest = manifest.headers.get('docker-content-digest') ?? '';
    const body = Buffer.from(await manifest.arrayBuffer());
    assert.equal((await fetch(`http://${registry}/v2/${repo}/manifests/${digest}`, { method: 'DELETE' })).status, 202);
    try {
      const r = sless(['check', '--kubeconfig', kubeconfig, '--namespace', SYSTEM]);
      assert.equal(r.status, 1, r.stdout);
      assert.deepEqual(failed(r.stdout), [`\u2716 runtime image go1.23: ${image} is not in ${registry}`], r.stdout);
      assert.match(r.stdout, /fix: SLESS_RUNTIME_IMAGE_PREFIX; push them with scripts\/images\.sh --registry/);
    } finally {
      await fetch(`http://${registry}/v2/${repo}/manifests/${tag}`, { method: 'PUT', headers: { 'content-type': mediaType }, body });
    }
  });

  it('installs with the Helm chart instead: sless check green, and the function served through it', async () => {
    assert.ok(controllerImage, 'the images were pushed (first test)');
    const { registry, hostAddress } = requireNode();
    // Uninstall the kustomize form as docs/install.md section 13 says, but keep the CRDs (the other test
    // files on this node use them; the chart then runs with crds.install=false) and the team's namespace.
    await kubectl('delete', 'namespace', SYSTEM, BUILDS, '--wait=true', '--timeout=180s');
    await kubectl('delete', 'clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding', '-l', 'app.kubernetes.io/part-of=sless', '--wait=true');

    const [repository, digest] = controllerImage.split('@') as [string, string];
    const values = {
      image: { repository, digest },
      crds: { install: false },
      // The test node has no volume provisioner: the git cache on an emptyDir (values.yaml says so).
      gitCache: { persistence: { enabled: false } },
      resources: { requests: { cpu: '10m', memory: '64Mi' } },
      config: {
        SLESS_PUBLIC_URL: `http://sless-controller.${SYSTEM}.svc`,
        SLESS_REGISTRY: `${registry}/deployed`,
        ...settings,
        SLESS_S3_ENDPOINT: s3.endpoint,
        SLESS_S3_BUCKET: s3.bucket,
        SLESS_S3_REGION: s3.region,
        // HS256 instead of the default JWKS URL: null removes a default (docs/install.md section 7).
        SLESS_JWKS_URL: null,
        SLESS_JWT_ALGORITHMS: null,
        SLESS_GIT_ALLOWED_HOSTS: hostAddress,
        SLESS_WATCH_NAMESPACE: tenant,
      },
      secret: { values: { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey, SLESS_JWT_SECRET: jwtSecret } },
    };
    const valuesFile = path.join(work, 'my-values.yaml');
    await writeFile(valuesFile, JSON.stringify(values));
    const started = Date.now();
    await helm(['install', 'sless', 'deploy/chart', '-n', SYSTEM, '--create-namespace', '-f', valuesFile, '--wait', '--timeout', '5m'], { KUBECONFIG: kubeconfig }).catch(async (err: unknown) => {
      throw new Error(`helm install: ${String(err)}\n${await controllerState()}`, { cause: err });
    });
    await kubectl('label', 'namespace', SYSTEM, 'pod-security.kubernetes.io/enforce=restricted', '--overwrite');
    console.log(`helm install --wait: ${Math.round((Date.now() - started) / 1000)} s`);

    const check = await eventually(
      () => {
        const r = sless(['check', '--kubeconfig', kubeconfig, '--namespace', SYSTEM]);
        assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
        return r;
      },
      { timeoutMs: 90_000, intervalMs: 5_000 },
    );
    assert.match(check.stdout, /^\u2714 controller \(sless-system\): 2 of 2 replicas Ready/m);
    assert.match(check.stdout, /^all \d+ checks passed$/m);

    // The Function the kustomize install built is served through the chart's controller and Service.
    const base = await serviceUrl();
    let last = '';
    await eventually(
      async () => {
        const r = await fetch(`${base}/fn/${tenant}/hi`, { signal: AbortSignal.timeout(10_000) });
        last = `${r.status} ${await r.text()}`;
        assert.equal(r.status, 200, last);
      },
      { timeoutMs: 180_000, intervalMs: 2_000 },
    ).catch(async (error: unknown) => {
      throw new Error(`/fn/${tenant}/hi through the chart's Service: ${last}\n${await controllerState()}`, { cause: error });
    });
    const minted = sless(['token', '--subject', subject, '--ttl', '1h'], { SLESS_JWT_SECRET: jwtSecret, SLESS_JWT_ISSUER: 'https://auth.example.com/', SLESS_JWT_AUDIENCE: 'sless' });
    const list = await fetch(`${base}/v1/namespaces/${tenant}/functions`, { headers: { authorization: `Bearer ${minted.stdout.trim()}` } });
    assert.equal(list.status, 200, await list.clone().text());
  });

  /** The controller's Service as the host reaches it (kube-proxy serves cluster IPs on the node). */
  async function serviceUrl(): Promise<string> {
    const service = await core.readNamespacedService({ namespace: SYSTEM, name: 'sless-controller' });
    return `http://${service.spec!.clusterIP}`;
  }

  async function controllerState(): Promise<string> {
    return `${(await kubectl('get', 'statefulset,pods', '-n', SYSTEM, '-o', 'wide').catch((err: unknown) => ({ stdout: String(err) }))).stdout}\n${await podLogs(kc, SYSTEM, CONTROLLER, 20)}`;
  }
});
