import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { LABELS } from '../objects/meta.ts';
import { buildShare, runningBuildsOf } from './build-share.ts';

function buildJob(namespace: string, finished?: 'Complete' | 'Failed'): V1Job {
  return {
    metadata: { labels: { [LABELS.component]: 'build', [LABELS.functionNamespace]: namespace } },
    status: finished ? { conditions: [{ type: finished, status: 'True' }] } : {},
  };
}

describe('a namespace’s share of builds', () => {
  it('counts the running build Jobs of that namespace only, not finished ones nor run Jobs', () => {
    const jobs = [
      buildJob('abuser'),
      buildJob('abuser'),
      buildJob('abuser', 'Complete'),
      buildJob('abuser', 'Failed'),
      buildJob('victim'),
      { metadata: { labels: { [LABELS.functionNamespace]: 'abuser' } } },
    ];
    assert.equal(runningBuildsOf(jobs, 'abuser'), 2);
    assert.equal(runningBuildsOf(jobs, 'victim'), 1);
    assert.equal(runningBuildsOf(jobs, 'other'), 0);
  });

  it('starts a build below the cap and queues it at the cap, saying why and which setting', () => {
    assert.deepEqual(buildShare(9, 10, 'team-a'), { start: true });
    const queued = buildShare(10, 10, 'team-a');
    assert.equal(queued.start, false);
    assert.match(queued.start ? '' : queued.message, /namespace team-a runs 10 builds.*SLESS_MAX_BUILDS_PER_NAMESPACE=10/);
  });
});
