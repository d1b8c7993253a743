// The controller's image built the way users build it, but by kaniko in the real node's cluster:
// deploy/Dockerfile from the repository (what deploy/Dockerfile.dockerignore lets through) with
// BASE_IMAGE = the local Node 22 image (test/images) and NODE_EXTRA_CA_CERTS = this machine's
// TLS-proxy CA mounted into the build pod, so `npm ci` in the build reaches the npm registry.
// The context goes to S3 (SeaweedFS) and kaniko reads it from there; the image is pushed to the
// node's registry by digest.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { localImages } from '../images/images.ts';
import { requireNode } from './node-kit.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('the controller image, built by kaniko on the real node', { timeout: 1_800_000 }, () => {
  const kc = testKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  let ns: TestNamespace;
  let work: string;

  before(async () => {
    ns = await freshNamespace(kc, 'e2e-deploy');
    work = await mkdtemp(path.join(os.tmpdir(), 'sless-deploy-'));
  });
  after(async () => {
    await ns?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('is built by kaniko in the cluster from deploy/Dockerfile and pushed by digest', async () => {
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
    await run('tar', ['-czf', context, '-C', repoRoot, '--exclude=*.test.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'deploy/Dockerfile']);
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
    const manifest = await fetch(`http://${registry}/v2/sless-controller/manifests/${digest}`, {
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
    });
    assert.equal(manifest.status, 200, 'the registry has the image by its digest');
  });
});
