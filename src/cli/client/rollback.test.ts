import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from './errors.ts';
import { liveOf, parseRevision, serves, type RevisionJson } from './rollback.ts';

const revs: RevisionJson[] = [
  { revision: 1, code_hash: 'sha256:a', live_until: '2026-12-06T10:00:00Z' },
  { revision: 2, code_hash: 'sha256:b', live_until: null },
];

describe('sless rollback: what it waits for', () => {
  it('the live revision is the one without live_until', () => {
    assert.equal(liveOf(revs)?.revision, 2);
    assert.equal(liveOf([]), undefined);
  });
  it('a rollback is done when its revision is live; an undo when the live revision has the function’s own code', () => {
    assert.ok(serves(revs, { revision: 2 }));
    assert.ok(!serves(revs, { revision: 1 }));
    assert.ok(serves(revs, { codeHash: 'sha256:b' }));
    assert.ok(!serves(revs, { codeHash: 'sha256:c' }));
  });
  it('--to takes a revision number, else one line', () => {
    assert.equal(parseRevision('12'), 12);
    for (const bad of ['0', '-1', '1.5', 'x', '']) assert.throws(() => parseRevision(bad), CliError);
  });
});
