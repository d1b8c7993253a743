// S3 unreachable: the sync cannot upload a build context, says so in the repository's status, and recovers
// by itself (retry with backoff) once S3 is back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { eventually } from '../helpers/kube.ts';
import { conditionOf, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';

describe('kube controller: S3 outage', () => {
  let kit: Kit;
  let s3: S3Server;
  before(async () => {
    s3 = await startS3Server();
    kit = await setupKit('kube-s3', { endpoint: s3.endpoint, accessKey: s3.accessKey, secretKey: s3.secretKey, region: s3.region, bucket: s3.bucket });
    await kit.clone.write(nodeFunction('steady'));
    await kit.clone.commitAndPush('one function');
    await kit.startController();
    await kit.createRepository('outage');
    await eventually(async () => assert.equal((await kit.buildJobs('steady')).length, 1), { timeoutMs: 30_000 });
  });
  after(async () => {
    await kit?.dispose();
    await s3?.dispose();
  });

  it('reports a clear error while S3 is down and recovers when it is back', async () => {
    await s3.stop();
    await kit.clone.write(nodeFunction('fresh'));
    await kit.clone.commitAndPush('new function while S3 is down');
    await kit.controller!.requestSync(kit.ns, 'outage');
    const repo = await eventually(async () => {
      const r = await kit.getRepository('outage');
      const fresh = r.status?.functions?.find((f) => f.name === 'fresh');
      assert.match(fresh?.error ?? '', /uploading the build context to s3:\/\/.* failed/);
      return r;
    }, { timeoutMs: 40_000 });
    assert.equal(conditionOf(repo)?.status, 'False');
    assert.equal(conditionOf(repo)?.reason, 'ArtifactFailed');
    assert.equal(await kit.getFunction('fresh'), undefined, 'no Function without its build context');
    assert.ok(await kit.getFunction('steady'), 'the running function is untouched');

    await s3.start();
    await eventually(async () => {
      const r = await kit.getRepository('outage');
      assert.equal(conditionOf(r)?.status, 'True', JSON.stringify(r.status?.conditions));
      assert.equal((await kit.buildJobs('fresh')).length, 1);
    }, { timeoutMs: 60_000 });
  });
});
