import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namespaceQuotaProblem } from './namespace-quotas.ts';

describe('namespaceQuotaProblem: schedules and jobs per namespace (issue 31 item 5)', () => {
  const schedules = { what: 'schedules', setting: 'SLESS_MAX_SCHEDULES_PER_NAMESPACE', cap: 10 } as const;
  it('admits up to the cap, counting what the namespace already holds', () => {
    assert.equal(namespaceQuotaProblem({ ...schedules, namespace: 'team-a', adding: 4, held: 6 }), undefined);
  });
  it('refuses past it, naming the namespace, the counts and the setting', () => {
    assert.equal(
      namespaceQuotaProblem({ ...schedules, namespace: 'team-a', adding: 5, held: 6 }),
      'namespace team-a would hold 11 schedules, more than the 10 one namespace may hold (SLESS_MAX_SCHEDULES_PER_NAMESPACE); 6 already there',
    );
  });
  it('never refuses taking nothing away', () => {
    assert.equal(namespaceQuotaProblem({ ...schedules, namespace: 'team-a', adding: 0, held: 50 }), undefined);
  });
});
