// Function objects the old system left in clusters: env as a list of {name, value}, and code in S3
// (s3Key) without a codeHash. The real controller against the real API server and S3; the build Job's
// outcome and the Deployment's rollout are played by the harness.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { apps, DIGEST_A, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';
import { GROUP, VERSION } from './kube-platform-kit.ts';

describe('kube controller: Functions of the old CRD', () => {
  let kit: Kit;
  const s3 = sharedS3();
  const s3Key = `old-system/${Date.now()}/hello.tar.gz`;
  before(async () => {
    kit = await setupKit('kube-old');
    const store = new S3ArtifactStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: s3.region,
      credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
    });
    // The old system's build context, where its Function points (the fetch step reads it; the harness plays the build).
    await store.put(s3Key, Readable.from([Buffer.from('a build context')]));
    await kit.startController();
    await kit.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'functions',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Function',
        metadata: { name: 'old-hello' },
        spec: {
          runtime: 'nodejs20',
          env: [
            { name: 'GREETING', value: 'hello' },
            { name: 'EMPTY', value: '' },
          ],
          s3Bucket: s3.bucket,
          s3Key,
        },
      },
    });
  });
  after(() => kit?.dispose());

  it('builds a Function with an s3Key and no codeHash instead of leaving it Pending', async () => {
    const [job] = await eventually(async () => {
      const jobs = await kit.buildJobs('old-hello');
      assert.equal(jobs.length, 1);
      return jobs;
    }, { timeoutMs: 60_000 });
    // The build reads the old context: the fetch step's presigned GET names its bucket and key.
    const fetchStep = job?.spec?.template.spec?.initContainers?.find((c) => c.name === 'fetch');
    const contextUrl = fetchStep?.args?.[fetchStep.args.indexOf('-url') + 1] ?? '';
    assert.ok(contextUrl.startsWith(`${s3.endpoint}/${s3.bucket}/${s3Key}?`), `the build reads the old context: ${JSON.stringify(fetchStep?.args)}`);
    const viaUrl = await fetch(contextUrl);
    assert.equal(viaUrl.status, 200);
    assert.equal(await viaUrl.text(), 'a build context');
    await markJobSucceeded(kit.kc, kit.buildNs, job?.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await eventually(async () => assert.ok((await kit.getFunction('old-hello'))?.status?.imageRef?.endsWith(DIGEST_A)), { timeoutMs: 60_000 });
    // Built is not serving (Ready means serving): play the rollout, then the old Function is Ready.
    await kit.serve('old-hello');
    await eventually(async () => {
      const f = await kit.getFunction('old-hello');
      assert.equal(f?.status?.phase, 'Ready', JSON.stringify(f?.status));
    }, { timeoutMs: 60_000 });
  });

  it('reads env given as a list of {name, value} the same way as a map', async () => {
    const dep = await eventually(async () => {
      const d = await apps(kit.kc).readNamespacedDeployment({ name: 'old-hello', namespace: kit.ns });
      assert.ok(d);
      return d;
    }, { timeoutMs: 60_000 });
    const env = dep.spec?.template.spec?.containers[0]?.env ?? [];
    assert.deepEqual(
      env.filter((e) => !e.name.startsWith('SLESS_') && e.name !== 'PORT' && e.name !== 'TMPDIR').map((e) => [e.name, e.value ?? '']),
      [
        ['EMPTY', ''],
        ['GREETING', 'hello'],
      ],
    );
    assert.ok(!env.some((e) => /^[0-9]+$/.test(e.name)), 'no variable named after a list index');
  });

  it('marks a Function whose env the untyped schema let through but no process can take Failed, saying why', async () => {
    await kit.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: 'bad-env' }, spec: { runtime: 'nodejs20', env: { 'MY-VAR': 'x' }, s3Key } },
    });
    const fn = await eventually(async () => {
      const f = await kit.getFunction('bad-env');
      assert.equal(f?.status?.phase, 'Failed');
      return f;
    }, { timeoutMs: 60_000 });
    assert.match(fn?.status?.message ?? '', /"MY-VAR" is not a variable name/);
    assert.equal((await kit.buildJobs('bad-env')).length, 0);
  });

  it('refuses an old env entry with valueFrom (a Secret reference) Stalled, pointing to envFromSecrets, and builds nothing', async () => {
    // The Go operator passed valueFrom through; taken as {name, value} it ran with the variable empty.
    const env = [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }];
    await kit.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'functions',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: 'value-from' }, spec: { runtime: 'nodejs20', env, s3Key } },
    });
    const fn = await eventually(async () => {
      const f = await kit.getFunction('value-from');
      assert.equal(f?.status?.phase, 'Failed', JSON.stringify(f?.status));
      return f;
    }, { timeoutMs: 60_000 });
    assert.match(fn?.status?.message ?? '', /spec\.env\.DB_PASSWORD takes its value from a Secret \(valueFrom\).*envFromSecrets/);
    const stalled = fn?.status?.conditions?.find((c: { type: string }) => c.type === 'Stalled');
    assert.equal(stalled?.status, 'True');
    assert.equal(stalled?.reason, 'InvalidEnv');
    assert.equal((await kit.buildJobs('value-from')).length, 0);
  });

  it("refuses a Function whose s3Bucket is not the controller's bucket, saying so, and builds nothing", async () => {
    // The controller presigns the context URL with its own S3 keys: honouring another bucket would let a
    // tenant read any object those keys reach (a confused deputy).
    await kit.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: kit.ns,
      plural: 'functions',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Function',
        metadata: { name: 'other-bucket' },
        spec: { runtime: 'nodejs20', s3Bucket: 'someone-elses-bucket', s3Key },
      },
    });
    const fn = await eventually(async () => {
      const f = await kit.getFunction('other-bucket');
      assert.equal(f?.status?.phase, 'Failed', JSON.stringify(f?.status));
      return f;
    }, { timeoutMs: 60_000 });
    assert.match(fn?.status?.message ?? '', /s3Bucket "someone-elses-bucket" is not this controller's bucket/);
    const stalled = fn?.status?.conditions?.find((c: { type: string }) => c.type === 'Stalled');
    assert.equal(stalled?.status, 'True');
    assert.equal(stalled?.reason, 'ForeignBucket');
    assert.equal((await kit.buildJobs('other-bucket')).length, 0);
  });
});
