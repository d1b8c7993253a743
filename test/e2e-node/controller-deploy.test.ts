// The controller deployed the way users deploy it, on the real node: its image built by kaniko in
// the cluster from deploy/Dockerfile (BASE_IMAGE: the local Node 22 image; NODE_EXTRA_CA_CERTS: this
// machine's TLS-proxy CA mounted into the build pod, so `npm ci` in the build reaches the npm
// registry; the context from S3, the image pushed by digest), then `kubectl apply -k` of deploy/
// through the test overlay (test/e2e-node/deploy/) plus this run's values. Two replicas run as pods
// with their ServiceAccount and RBAC; a function pushed to the test git server is built by the
// deployed controller in sless-builds and /fn is called through the controller's Service, so the
// proxy resolves the function's Service by in-cluster DNS.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { SignJWT } from 'jose';
import { parse as parseYaml } from 'yaml';
import { nodeBinaryPaths } from '../cluster/node/node-cluster.ts';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { localImages, pushTestImages } from '../images/images.ts';
import { registryManifestStatus, requireNode } from './node-kit.ts';
import { podLogs } from './sless-kit.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const overlay = fileURLToPath(new URL('./deploy', import.meta.url));

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

describe('the controller deployed with kubectl apply -k on the real node', { timeout: 1_800_000 }, () => {
  const kc = testKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const kubectl = (...args: string[]) =>
    run(nodeBinaryPaths().kubectl, args, { env: { ...process.env, KUBECONFIG: process.env.SLESS_TEST_KUBECONFIG }, maxBuffer: 16 * 1024 * 1024 });
  let ns: TestNamespace;
  let work: string;
  let controllerImage: string | undefined;

  before(async () => {
    ns = await freshNamespace(kc, 'e2e-deploy');
    work = await mkdtemp(path.join(os.tmpdir(), 'sless-deploy-'));
  });
  after(async () => {
    // Not `kubectl delete -k`: that would delete the CRDs under the other test files running beside this one.
    await kubectl('delete', 'namespace', SYSTEM, BUILDS, '--ignore-not-found', '--wait=false').catch(() => undefined);
    await kubectl(
      'delete',
      'clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding',
      '-l',
      'app.kubernetes.io/part-of=sless',
      '--ignore-not-found',
    ).catch(() => undefined);
    await ns?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('builds the controller image with kaniko in the cluster from deploy/Dockerfile, pushed by digest', async () => {
    const { registry } = requireNode();
    // Only what this build needs: kaniko and the Node 22 base (the runtime images come in the next test).
    const local = await localImages();
    const push = async (name: string): Promise<string> => {
      const image = local.find((i) => i.name === name);
      assert.ok(image, `test/images/build.sh lists ${name}`);
      const ref = `${registry}/sless-test/${name}:${image.layoutTag}`;
      await run('skopeo', ['copy', '-q', '--dest-tls-verify=false', `oci:${image.layout}:${image.layoutTag}`, `docker://${ref}`]);
      return ref;
    };
    const kanikoImage = await push('kaniko');
    const baseImage = await push('sless-test-base-node22');

    // The build context: what deploy/Dockerfile.dockerignore lets through, plus the Dockerfile.
    const context = path.join(work, 'context.tar.gz');
    await run('tar', ['-czf', context, '-C', repoRoot, '--exclude=*.test.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'scripts', 'bin', 'src', 'deploy/Dockerfile']);
    const e = process.env;
    const s3 = new S3Client({
      endpoint: e.SLESS_TEST_S3_ENDPOINT,
      region: e.SLESS_TEST_S3_REGION ?? 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: e.SLESS_TEST_S3_ACCESS_KEY!, secretAccessKey: e.SLESS_TEST_S3_SECRET_KEY! },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const key = `e2e-deploy/${randomBytes(4).toString('hex')}.tar.gz`;
    await s3.send(new PutObjectCommand({ Bucket: e.SLESS_TEST_S3_BUCKET, Key: key, Body: await readFile(context) }));
    s3.destroy();

    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'host-ca' }, data: { 'ca.crt': await readFile('/etc/ssl/certs/ca-certificates.crt', 'utf8') } },
    });
    await core.createNamespacedSecret({
      namespace: ns.name,
      body: { metadata: { name: 's3' }, stringData: { AWS_ACCESS_KEY_ID: e.SLESS_TEST_S3_ACCESS_KEY!, AWS_SECRET_ACCESS_KEY: e.SLESS_TEST_S3_SECRET_KEY! } },
    });
    const destination = `${registry}/sless-controller:e2e`;
    await batch.createNamespacedJob({
      namespace: ns.name,
      body: {
        metadata: { name: 'controller-image' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              containers: [
                {
                  name: 'kaniko',
                  image: kanikoImage,
                  args: [
                    `--context=s3://${e.SLESS_TEST_S3_BUCKET}/${key}`,
                    '--dockerfile=deploy/Dockerfile',
                    `--destination=${destination}`,
                    `--build-arg=BASE_IMAGE=${baseImage}`,
                    '--build-arg=NODE_EXTRA_CA_CERTS=/etc/sless-test-ca/ca.crt',
                    '--digest-file=/dev/termination-log',
                    '--snapshot-mode=redo',
                    '--use-new-run',
                  ],
                  env: [
                    { name: 'S3_ENDPOINT', value: e.SLESS_TEST_S3_ENDPOINT },
                    { name: 'S3_FORCE_PATH_STYLE', value: 'true' },
                    { name: 'AWS_REGION', value: e.SLESS_TEST_S3_REGION ?? 'us-east-1' },
                  ],
                  envFrom: [{ secretRef: { name: 's3' } }],
                  volumeMounts: [{ name: 'ca', mountPath: '/etc/sless-test-ca', readOnly: true }],
                },
              ],
              volumes: [{ name: 'ca', configMap: { name: 'host-ca' } }],
            },
          },
        },
      },
    });
    const pod = await eventually(
      async () => {
        const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'job-name=controller-image' });
        const p = pods.items.find((i) => i.status?.phase === 'Succeeded' || i.status?.phase === 'Failed');
        assert.ok(p, 'the kaniko pod has finished');
        return p;
      },
      { timeoutMs: 1_200_000, intervalMs: 2_000 },
    );
    const log = await core.readNamespacedPodLog({ namespace: ns.name, name: pod.metadata!.name!, tailLines: 40 }).catch(() => '');
    assert.equal(pod.status?.phase, 'Succeeded', log);
    const digest = pod.status?.containerStatuses?.[0]?.state?.terminated?.message?.trim() ?? '';
    assert.match(digest, /^sha256:[0-9a-f]{64}$/, log);
    assert.equal(await registryManifestStatus(`${registry}/sless-controller@${digest}`), 200, 'the registry has the image by its digest');
    controllerImage = `${registry}/sless-controller@${digest}`;
  });

  it('runs as pods from kubectl apply -k, builds a pushed function and serves it through its Service', async () => {
    assert.ok(controllerImage, 'the controller image was built (previous test)');
    const { registry, hostAddress } = requireNode();
    const images = await pushTestImages(`${registry}/sless-test`);
    const e = process.env;
    const jwtSecret = randomBytes(32).toString('hex');
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
              SLESS_S3_ENDPOINT: e.SLESS_TEST_S3_ENDPOINT,
              SLESS_S3_BUCKET: e.SLESS_TEST_S3_BUCKET,
              SLESS_S3_REGION: e.SLESS_TEST_S3_REGION ?? 'us-east-1',
              SLESS_REGISTRY: `${registry}/deployed`,
              SLESS_RUNTIME_IMAGE_PREFIX: images.runtimeImagePrefix,
              SLESS_KANIKO_IMAGE: images.kanikoImage,
              SLESS_BUILD_TOOLS_IMAGE: images.buildToolsImage,
              // The test git server and S3 listen on the node's bridge address, a private one.
              SLESS_GIT_ALLOWED_HOSTS: hostAddress,
              SLESS_PUBLIC_URL: `http://sless-controller.${SYSTEM}.svc`,
              // Other test files run their own controllers on this node at the same time: this one
              // reconciles only its test namespace (it still serves /fn for every namespace).
              SLESS_WATCH_NAMESPACE: ns.name,
            }),
          },
        ],
        secretGenerator: [
          {
            name: 'sless-controller-secrets',
            namespace: SYSTEM,
            behavior: 'merge',
            literals: literals({ AWS_ACCESS_KEY_ID: e.SLESS_TEST_S3_ACCESS_KEY, AWS_SECRET_ACCESS_KEY: e.SLESS_TEST_S3_SECRET_KEY, SLESS_JWT_SECRET: jwtSecret }),
          },
        ],
      }),
    );
    await kubectl('apply', '--server-side', '--force-conflicts', '-k', dir);
    const controllerState = async (): Promise<string> =>
      `${(await kubectl('get', 'statefulset,pods', '-n', SYSTEM, '-o', 'wide').catch((err: unknown) => ({ stdout: String(err) }))).stdout}\n${await podLogs(kc, SYSTEM, CONTROLLER, 20)}`;
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

    // A function pushed to the test git server, built by the deployed controller in sless-builds.
    const repo = await createRepo(sharedGitServer(), 'e2e-deploy');
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
        namespace: ns.name,
        plural: 'functionrepositories',
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'FunctionRepository', metadata: { name: 'fns' }, spec: { url: repo.url, interval: '10s' } },
      });
      const service = await core.readNamespacedService({ namespace: SYSTEM, name: 'sless-controller' });
      const base = `http://${service.spec!.clusterIP}`;
      let last = '';
      const res = await eventually(
        async () => {
          const r = await fetch(`${base}/fn/${ns.name}/hi`, { signal: AbortSignal.timeout(10_000) });
          last = `${r.status} ${await r.clone().text()}`;
          assert.equal(r.status, 200, last);
          return r;
        },
        { timeoutMs: 600_000, intervalMs: 2_000 },
      ).catch(async (error: unknown) => {
        const fn = await kubectl('get', 'functions,functionrepositories', '-n', ns.name, '-o', 'yaml').catch((err: unknown) => ({ stdout: String(err) }));
        throw new Error(`/fn/${ns.name}/hi through the Service: ${last}\n${fn.stdout.slice(-4000)}\n${await controllerState()}`, { cause: error });
      });
      assert.deepEqual(await res.json(), { served: 'in-cluster' });
      const builds = await batch.listNamespacedJob({ namespace: BUILDS, labelSelector: `sless.kube5s.ru/function-namespace=${ns.name},sless.kube5s.ru/function=hi` });
      assert.equal(builds.items.length, 1, 'one build Job, in the deployed build namespace');

      // /v1 through the same Service: the HS256 secret from the overlay's Secret verifies tokens.
      const token = await new SignJWT({ sless_admin: true })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('https://auth.example.com/')
        .setAudience('sless')
        .setSubject('e2e-deploy')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(jwtSecret));
      const list = await fetch(`${base}/v1/namespaces/${ns.name}/functions`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(list.status, 200, await list.clone().text());
      assert.equal((await fetch(`${base}/v1/namespaces/${ns.name}/functions`)).status, 401);
    } finally {
      await clone.dispose();
    }
  });
});
