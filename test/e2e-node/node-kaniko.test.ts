// The same Node.js function without dependencies, on a controller told to build every image with kaniko
// (SLESS_LAYER_BUILDS=0): git push → kaniko Job (fetch, kaniko, push) → image by digest in the registry →
// Deployment available → /fn answers. By default such a function skips kaniko (node-function.test.ts);
// this is the path an operator who turns that off gets, and the kaniko path for a Dockerfile without RUN.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BUILD_CONTAINERS } from '../../src/platform/kubernetes/objects/build-job.ts';
import { describeServing, readyAfterOneBuild } from './node-kit.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

describe('a Node.js function without dependencies, built by kaniko (SLESS_LAYER_BUILDS=0)', { timeout: 900_000 }, () => {
  let kit: NodeKit;

  before(async () => {
    kit = await setupNodeKit('e2e-node-kaniko', { env: { SLESS_LAYER_BUILDS: '0' } });
    await kit.startController();
    await kit.push(
      {
        'functions/hello/function.yaml': 'name: hello\nruntime: nodejs20\nentrypoint: handler.handle\n',
        'functions/hello/handler.js': "exports.handle = async (event) => ({ built: 'kaniko', echo: event });\n",
      },
      'v1',
    );
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it('is built by a kaniko Job, pushed by digest, rolled out and served through /fn', async () => {
    const { pod } = await readyAfterOneBuild(kit, 'hello');
    assert.deepEqual(
      pod?.initContainers?.map((c) => c.name),
      [BUILD_CONTAINERS.fetch, BUILD_CONTAINERS.kaniko],
      'the context is fetched, then kaniko builds it',
    );
    assert.equal(pod?.initContainers?.[1]?.image, kit.images.kanikoImage);
    assert.deepEqual(pod?.containers.map((c) => c.name), [BUILD_CONTAINERS.push]);

    const res = await kit.callFn('hello', { method: 'POST', body: JSON.stringify({ n: 1 }), headers: { 'content-type': 'application/json' } });
    const text = await res.text();
    if (res.status !== 200) assert.fail(`/fn answered ${res.status} ${text}\n${await describeServing(kit, 'hello', res)}`);
    assert.deepEqual(JSON.parse(text), { built: 'kaniko', echo: { n: 1 } });
  });
});
