// The reasons users and tools match on (kubectl, /v1, Flux and Argo CD health checks) stay as they were.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GIT_SOURCE_ERROR_REASONS } from '../source/git-source-error.ts';
import { FUNCTION_JOB_REASONS, FUNCTION_REASONS, GIT_REASON_OF, isBrokenContainerReason, REPOSITORY_REASONS, TRIGGER_REASONS } from './reasons.ts';

describe('reasons', () => {
  it('names each git error in CamelCase after Git, `auth` as GitAuthFailed', () => {
    assert.deepEqual(GIT_SOURCE_ERROR_REASONS.map((r) => GIT_REASON_OF[r]), [
      'GitAuthFailed',
      'GitNotFound',
      'GitNotGit',
      'GitBranchNotFound',
      'GitRefused',
      'GitTooLarge',
      'GitUnreachable',
      'GitFetchFailed',
    ]);
  });

  it('lists each reason of a kind once, every one CamelCase', () => {
    for (const list of [FUNCTION_REASONS, REPOSITORY_REASONS, TRIGGER_REASONS, FUNCTION_JOB_REASONS]) {
      assert.equal(new Set(list).size, list.length, `a reason listed twice in ${list.join(', ')}`);
      for (const reason of list) assert.match(reason, /^[A-Z][A-Za-z]+$/);
    }
  });

  it("repeats only the kubelet's waiting reasons that waiting does not heal", () => {
    assert.equal(isBrokenContainerReason('CrashLoopBackOff'), true);
    assert.equal(isBrokenContainerReason('ContainerCreating'), false);
  });
});
