// The controller end to end against a real apiserver, SeaweedFS and git server: a push becomes Functions,
// one build Job (fetch, kaniko, push; a package.json makes it a dependencies build) and the Service per function, and after the (harness-played) build a Deployment by digest.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { controllersRunning, eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { apps, conditionOf, core, DIGEST_A, DIGEST_B, nodeFunction, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';

describe('kube controller: push → build → deploy', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-ctl');
    await kit.clone.write({ ...nodeFunction('hello', { env: { GREETING: 'hi' } }), ...nodeFunction('world') });
    await kit.clone.commitAndPush('two functions');
    await kit.startController();
    await kit.createRepository('site');
  });
  after(() => kit?.dispose());

  it('makes one Function per folder, owned by the repository, and one build Job each with the exact fetch/kaniko/push spec', async () => {
    const fns = await eventually(async () => {
      const list = await kit.listFunctions();
      assert.deepEqual(list.map((f) => f.metadata?.name).sort(), ['hello', 'world']);
      return list;
    });
    const hello = fns.find((f) => f.metadata?.name === 'hello')!;
    assert.equal(hello.metadata?.labels?.['sless.kube5s.ru/repository'], 'site');
    assert.equal(hello.metadata?.ownerReferences?.[0]?.kind, 'FunctionRepository');
    assert.deepEqual(hello.spec?.env, { GREETING: 'hi' });
    assert.match(hello.spec?.codeHash ?? '', /^sha256:[0-9a-f]{64}$/);

    const jobs = await eventually(async () => {
      const list = await kit.buildJobs();
      assert.equal(list.length, 2);
      return list;
    });
    const job = jobs.find((j) => j.metadata?.labels?.['sless.kube5s.ru/function'] === 'hello')!;
    const pod = job.spec?.template.spec;
    const s3 = sharedS3();
    const [fetchStep, kaniko] = pod?.initContainers ?? [];
    const push = pod?.containers[0];
    // A package.json: the dependencies image is kaniko's (when the registry lacks it), the code is appended by push (docs/builds.md).
    const dest = push?.args?.[push.args.indexOf('-destination') + 1] ?? '';
    assert.match(dest, new RegExp(`^registry\\.test:5000/sless/${kit.ns}-hello:[0-9a-f]{40}$`));
    const cacheRepo = `registry.test:5000/sless/${kit.ns}-hello/cache`;
    const depsRepo = `registry.test:5000/sless/${kit.ns}-hello/deps`;
    const contextUrl = fetchStep?.args?.[2] ?? '';
    assert.deepEqual(fetchStep?.args, [
      'fetch', '-url', contextUrl, '-out', '/workspace/context.tar.gz', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers',
      '-deps-repo', depsRepo, '-deps-dockerfile', 'Dockerfile.dependencies', '-kaniko-context', '/workspace/kaniko-context.tar.gz', '-deps-out', '/workspace/dependencies',
    ]);
    assert.equal(fetchStep?.image, 'registry.test:5000/runtimes/sless-build-tools:4');
    assert.equal(kaniko?.image, 'martizih/kaniko:v1.28.3');
    assert.deepEqual(kaniko?.args, [
      '--context=tar:///workspace/kaniko-context.tar.gz',
      '--dockerfile=Dockerfile.dependencies',
      `--destination=${depsRepo}:build`,
      '--no-push',
      '--tar-path=/out/image.tar',
      '--snapshot-mode=redo',
      '--use-new-run',
      '--cache=true',
      '--cache-repo=oci:/cache/kaniko/layers',
    ]);
    assert.equal(kaniko?.env, undefined, 'kaniko gets no S3 settings or keys');
    assert.deepEqual(push?.args, [
      'append', '-context', '/workspace/context.tar.gz', '-workdir', '/workspace', '-dockerfile', 'Dockerfile.code', '-dependencies', '/workspace/dependencies',
      '-tarball', '/out/image.tar', '-destination', dest, '-digest-file', '/dev/termination-log', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers',
    ]);
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.deepEqual(pod?.volumes?.map((v) => v.secret?.secretName ?? v.name), ['workspace', 'cache', 'out', 'sless-registry']);
    assert.equal(job.spec?.ttlSecondsAfterFinished, 3600);
    // The context is in S3, and the presigned URL alone (no credentials) reads it: the build needs no S3 key.
    assert.ok(contextUrl.startsWith(`${s3.endpoint}/${s3.bucket}/${hello.spec?.s3Key}?`), contextUrl);
    assert.match(contextUrl, /X-Amz-Signature=/);
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey } });
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: hello.spec?.s3Key }));
    assert.ok((head.ContentLength ?? 0) > 0);
    const viaUrl = await fetch(contextUrl);
    assert.equal(viaUrl.status, 200);
    assert.equal((await viaUrl.arrayBuffer()).byteLength, head.ContentLength);
    // No copy of the controller's S3 keys in the build namespace.
    await assert.rejects(core(kit.kc).readNamespacedSecret({ namespace: kit.buildNs, name: 'sless-build-s3' }), (err: { code?: number }) => err.code === 404);

    const fn = await kit.getFunction('hello');
    assert.equal(fn?.status?.phase, 'Building');
    // Its Service is made while it builds, not with the Deployment: kube-proxy has the build's time to
    // program it, so a call right after Ready is not sent wherever the node routes an unknown address.
    const svc = await core(kit.kc).readNamespacedService({ namespace: kit.ns, name: 'hello' });
    assert.equal(svc.spec?.ports?.[0]?.port, 80);
    await assert.rejects(apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' }), (err: { code?: number }) => err.code === 404);
  });

  it('deploys the built image by digest once kaniko reports it: Deployment + Service, Ready=True, observedGeneration current', async () => {
    for (const job of await kit.buildJobs()) {
      const digest = job.metadata?.labels?.['sless.kube5s.ru/function'] === 'hello' ? DIGEST_A : DIGEST_B;
      await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: digest });
    }
    // Built is not serving: until its Deployment is rolled out and available, the Function is Reconciling.
    const rolling = await eventually(async () => {
      const f = await kit.getFunction('hello');
      assert.equal(conditionOf(f, 'Reconciling')?.reason, 'RollingOut', JSON.stringify(f?.status));
      return f!;
    }, { timeoutMs: 30_000 });
    assert.equal(rolling.status?.phase, 'Pending');
    assert.equal(conditionOf(rolling)?.status, 'Unknown');
    assert.match(rolling.status?.imageRef ?? '', /@sha256:/, 'the image is known before it serves');
    await kit.serve('hello', 'world');
    const fn = await eventually(async () => {
      const f = await kit.getFunction('hello');
      assert.equal(f?.status?.phase, 'Ready', JSON.stringify(f?.status));
      assert.equal(conditionOf(f)?.status, 'True');
      assert.equal(f?.status?.observedGeneration, f?.metadata?.generation);
      return f!;
    }, { timeoutMs: 30_000 });
    assert.match(fn.status?.imageRef ?? '', new RegExp(`^registry\\.test:5000/sless/${kit.ns}-hello:[0-9a-f]{40}@${DIGEST_A}$`));
    assert.equal(fn.status?.url, `/fn/${kit.ns}/hello`);
    assert.ok(fn.status?.lastBuiltAt);

    const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
    const c = dep.spec?.template.spec?.containers[0];
    assert.equal(c?.image, fn.status?.imageRef);
    assert.equal(dep.spec?.replicas, 1);
    assert.deepEqual(c?.resources?.limits, { memory: '128Mi' });
    assert.equal(c?.readinessProbe?.httpGet?.path, '/health');
    assert.ok(c?.env?.some((e) => e.name === 'GREETING' && e.value === 'hi'));
    assert.equal(dep.metadata?.ownerReferences?.[0]?.name, 'hello');
    const svc = await core(kit.kc).readNamespacedService({ namespace: kit.ns, name: 'hello' });
    assert.equal(svc.spec?.ports?.[0]?.port, 80);

    const repo = await eventually(async () => {
      const r = await kit.getRepository('site');
      assert.equal(conditionOf(r)?.status, 'True', JSON.stringify(r.status));
      return r;
    });
    assert.equal(repo.status?.webhookPath, `/hooks/${kit.ns}/site`);
    assert.equal(repo.status?.observedGeneration, repo.metadata?.generation);
    assert.deepEqual(repo.status?.functions?.map((f) => f.name), ['hello', 'world']);
    assert.match(repo.status?.revision ?? '', /^[0-9a-f]{40}$/);
  });

  it('rolls out an env-only change without a build Job', async () => {
    await kit.clone.write(nodeFunction('hello', { env: { GREETING: 'hello again' } }));
    await kit.clone.commitAndPush('env only');
    await kit.controller!.requestSync(kit.ns, 'site');
    await eventually(async () => {
      const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
      assert.ok(dep.spec?.template.spec?.containers[0]?.env?.some((e) => e.name === 'GREETING' && e.value === 'hello again'));
    });
    assert.equal((await kit.buildJobs()).length, 2, 'no new build Job');
    await kit.serve('hello');
    await eventually(async () => assert.equal((await kit.getFunction('hello'))?.status?.phase, 'Ready'), { timeoutMs: 30_000 });
  });

  it('keeps the last good Function when a manifest breaks, reports the error, and leaves the others alone', async () => {
    await kit.clone.write({ 'functions/world/function.yaml': 'name: world\nruntime: cobol\n', ...nodeFunction('third') });
    await kit.clone.commitAndPush('broken world, new third');
    await kit.controller!.requestSync(kit.ns, 'site');
    const repo = await eventually(async () => {
      const r = await kit.getRepository('site');
      const world = r.status?.functions?.find((f) => f.name === 'world');
      assert.match(world?.error ?? '', /runtime/);
      assert.ok(r.status?.functions?.some((f) => f.name === 'third' && !f.error));
      return r;
    });
    assert.equal(conditionOf(repo)?.status, 'False');
    const world = await kit.getFunction('world');
    assert.equal(world?.spec?.runtime, 'nodejs20', 'the last good spec is untouched');
    assert.equal(world?.status?.phase, 'Ready');
    // The sync's status lists third once it is applied; its build Job comes from the Function's own reconcile just after.
    await eventually(async () => assert.equal((await kit.buildJobs('third')).length, 1));
  });

  it('removes a deleted folder: its Function goes, and what it owned goes with it', async () => {
    const s3 = sharedS3();
    const contextKey = (await kit.getFunction('hello'))?.spec?.s3Key;
    await kit.clone.remove('functions/hello');
    await kit.clone.commitAndPush('remove hello');
    await kit.controller!.requestSync(kit.ns, 'site');
    await eventually(async () => assert.equal(await kit.getFunction('hello'), undefined), { timeoutMs: 30_000 });
    assert.equal(await kit.getTrigger('hello-http'), undefined);
    await eventually(async () => assert.equal((await kit.buildJobs('hello')).length, 0, 'the finalizer removed its build Jobs'));
    if (controllersRunning()) {
      await eventually(async () => {
        const deps = await apps(kit.kc).listNamespacedDeployment({ namespace: kit.ns });
        assert.deepEqual(deps.items.map((d) => d.metadata?.name), ['world'], 'garbage collector removed the Deployment');
      }, { timeoutMs: 30_000 });
    }
    assert.ok(await kit.getFunction('world'), 'others stay');
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey } });
    await assert.rejects(client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: contextKey })), /NotFound/, 'its unreferenced build context is deleted');
  });
});
