import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FunctionManifest } from '../../../manifest/types.ts';
import { repositoryObjects } from './repository-objects.ts';

const repo = { metadata: { name: 'site', namespace: 'team-a', uid: 'uid-repo' } };
const manifest: FunctionManifest = {
  name: 'hello',
  runtime: 'python3.12',
  entrypoint: 'main.handle',
  memoryMb: 128,
  timeoutSec: 30,
  env: { GREETING: 'hi' },
  envFromSecrets: ['db'],
  include: [],
  ignore: [],
  http: { enabled: false },
  schedules: [{ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Moscow', event: { kind: 'nightly' } }],
  jobs: [{ name: 'seed', runId: 2, event: { n: 1 } }],
};
const src = { manifest, codeHash: 'sha256:abc', path: 'functions/hello', revision: 'r1', s3Bucket: 'b', s3Key: 'contexts/k.tar.gz' };

describe('repositoryObjects', () => {
  const { fn, triggers, jobs } = repositoryObjects(repo, src);
  it('makes a Function owned by and labelled with its repository', () => {
    assert.equal(fn.metadata?.name, 'hello');
    assert.equal(fn.metadata?.namespace, 'team-a');
    assert.equal(fn.metadata?.labels?.['sless.kube5s.ru/repository'], 'site');
    assert.deepEqual(fn.metadata?.ownerReferences, [
      { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'FunctionRepository', name: 'site', uid: 'uid-repo', controller: true, blockOwnerDeletion: true },
    ]);
    assert.deepEqual(fn.spec, {
      runtime: 'python3.12',
      entrypoint: 'main.handle',
      memoryMB: 128,
      timeoutSec: 30,
      env: { GREETING: 'hi' },
      envFromSecrets: ['db'],
      codeHash: 'sha256:abc',
      s3Bucket: 'b',
      s3Key: 'contexts/k.tar.gz',
      source: { repository: 'site', path: 'functions/hello', revision: 'r1' },
    });
  });
  it('carries scale into spec.scale as written, and leaves it out when function.yaml has none', () => {
    assert.equal(fn.spec?.scale, undefined);
    const scaled = repositoryObjects(repo, { ...src, manifest: { ...manifest, scale: { min: 0, max: 3 } } }).fn;
    assert.deepEqual(scaled.spec?.scale, { min: 0, max: 3 });
  });
  it('makes one http Trigger carrying http.enabled and one cron Trigger per schedule', () => {
    assert.deepEqual(
      triggers.map((t) => [t.metadata?.name, t.spec]),
      [
        ['hello-http', { type: 'http', functionRef: 'hello', enabled: false }],
        ['hello-cron-nightly', { type: 'cron', functionRef: 'hello', schedule: '0 3 * * *', timezone: 'Europe/Moscow', eventJSON: '{"kind":"nightly"}', enabled: true }],
      ],
    );
  });
  it('makes one queue Trigger per queues: entry, named <fn>-queue-<name>, with every setting in spec.queue', () => {
    const queues = [{ name: 'orders', url: 'amqp://rabbit:5672/%2f', secret: 'creds', queue: 'orders', declare: false, prefetch: 10, retries: 5, deadLetter: 'orders.dlq' }];
    const made = repositoryObjects(repo, { ...src, manifest: { ...manifest, queues } }).triggers.filter((t) => t.spec?.type === 'queue');
    assert.deepEqual(
      made.map((t) => [t.metadata?.name, t.metadata?.labels?.['sless.kube5s.ru/function'], t.spec]),
      [
        [
          'hello-queue-orders',
          'hello',
          { type: 'queue', functionRef: 'hello', queue: { url: 'amqp://rabbit:5672/%2f', secret: 'creds', queue: 'orders', declare: false, prefetch: 10, retries: 5, deadLetter: 'orders.dlq' }, enabled: true },
        ],
      ],
    );
  });
  it('makes one FunctionJob per job with its runID and event', () => {
    assert.deepEqual(jobs.map((j) => [j.metadata?.name, j.spec]), [['hello-seed', { functionRef: 'hello', runID: 2, eventJSON: '{"n":1}' }]]);
  });
});
