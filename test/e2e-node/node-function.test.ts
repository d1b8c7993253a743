// A Node.js function on the real node, end to end through a real `sless controller`: git push →
// build Job (its Dockerfile runs nothing, so the code is appended as a layer without kaniko: build-kind.ts;
// node-kaniko.test.ts builds the same with kaniko) → image by digest in the registry → Deployment available → /fn answers; a code
// change rolls out with no failed request; a config-only change redeploys without a build; turning
// HTTP off scales to 0 and /fn answers 503.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { BUILD_CONTAINERS } from '../../src/platform/kubernetes/objects/build-job.ts';
import { eventually } from '../helpers/kube.ts';
import { readyAfterOneBuild } from './node-kit.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const manifest = (extra = ''): string => `name: hello\nruntime: nodejs20\nentrypoint: handler.handle\n${extra}`;
const handler = (version: string): string =>
  `exports.handle = async () => ({ version: '${version}', greeting: process.env.GREETING || 'none' });\n`;

describe('a Node.js function on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;
  let apps: AppsV1Api;

  before(async () => {
    kit = await setupNodeKit('e2e-node-fn');
    apps = kit.kc.makeApiClient(AppsV1Api);
    await kit.startController();
    await kit.push({ 'functions/hello/function.yaml': manifest(), 'functions/hello/handler.js': handler('v1') }, 'v1');
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it('is built by a layer-append Job (no kaniko), pushed by digest, rolled out and served through /fn', async () => {
    const { imageRef, pod } = await readyAfterOneBuild(kit, 'hello');
    assert.deepEqual(pod?.initContainers ?? [], [], 'no fetch or kaniko step');
    assert.deepEqual(pod?.containers.map((c) => [c.name, c.args?.[0]]), [[BUILD_CONTAINERS.push, 'append']]);

    const deployment = await apps.readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
    assert.ok((deployment.status?.availableReplicas ?? 0) >= 1);
    assert.equal(deployment.spec?.template.spec?.containers[0]?.image, imageRef);

    const res = await kit.callFn('hello');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { version: 'v1', greeting: 'none' });
  });

  it('rolls a code change out with no failed request on the way', async () => {
    const failures: string[] = [];
    let seenV2 = false;
    let calls = 0;
    const loop = (async () => {
      const deadline = Date.now() + 300_000;
      while (!seenV2 && Date.now() < deadline) {
        calls++;
        try {
          const res = await kit.callFn('hello');
          const text = await res.text();
          if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
          else if ((JSON.parse(text) as { version: string }).version === 'v2') seenV2 = true;
        } catch (error) {
          failures.push(String(error));
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await kit.push({ 'functions/hello/handler.js': handler('v2') }, 'v2');
    assert.equal((await kit.webhook('fns')).status, 202);
    await loop;
    assert.ok(seenV2, 'the new code answers');
    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed during the rollout`);
    assert.equal((await kit.buildJobs('hello')).length, 2, 'a second build for the code change');
  });

  it('redeploys a config-only change without building, and serves the new env', async () => {
    const before = (await kit.buildJobs('hello')).length;
    await kit.push({ 'functions/hello/function.yaml': manifest('env:\n  GREETING: privet\n') }, 'env');
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(
      async () => {
        const res = await kit.callFn('hello');
        assert.deepEqual(await res.json(), { version: 'v2', greeting: 'privet' });
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    assert.equal((await kit.buildJobs('hello')).length, before, 'no build Job for a config-only change');
  });

  it('scales to 0 with http.enabled false, and /fn answers 503', async () => {
    await kit.push({ 'functions/hello/function.yaml': manifest('env:\n  GREETING: privet\nhttp: {enabled: false}\n') }, 'http off');
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
        assert.equal(d.spec?.replicas, 0);
        assert.equal(d.status?.readyReplicas ?? 0, 0);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const res = await kit.callFn('hello');
    assert.equal(res.status, 503, await res.text());
  });
});
