import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { visibleFunctions } from './function-filter.ts';

describe('visibleFunctions', () => {
  it('shows everything when nothing is excluded', () => {
    assert.equal(visibleFunctions([])('hello'), true);
  });
  it('hides exact names and globs, nothing else', () => {
    const visible = visibleFunctions(['healthcheck', 'internal-*', 'tmp-?']);
    assert.deepEqual(
      ['healthcheck', 'healthcheck-2', 'internal-billing', 'internal', 'tmp-1', 'tmp-12', 'hello'].filter(visible),
      ['healthcheck-2', 'internal', 'tmp-12', 'hello'],
    );
  });
  it('treats regular-expression characters literally', () => {
    assert.equal(visibleFunctions(['a.b'])('axb'), true);
  });
});
