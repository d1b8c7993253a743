import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PreviewRecord } from '../platform/types.ts';
import { previewBadge, previewsByRepository, previewView } from './previews-view.ts';

const record = (number: number, repository = 'fns'): PreviewRecord => ({
  number,
  namespace: `team-pr-${number}`,
  repository,
  branch: 'feature-x',
  head: 'c'.repeat(40),
  url: `/fn/team-pr-${number}/`,
  expiresAt: '2026-12-06T12:30:00.000Z',
  functions: [
    { name: 'a', state: 'built', phase: 'Building', url: `/fn/team-pr-${number}/a` },
    { name: 'b', state: 'production', url: '/fn/team/b' },
    { name: 'c', state: 'removed' },
    { name: 'd', state: 'failed' },
  ],
});

describe('previews in the console', () => {
  it('a preview: summary, short head, expiry, each function linked where it answers and coloured by state', () => {
    const v = previewView(record(3), 'team');
    assert.equal(v.summary, '1 built, 1 from production, 1 removed, 1 failed');
    assert.equal(v.headShort, 'ccccccc');
    assert.equal(v.expires?.iso, '2026-12-06T12:30:00.000Z');
    assert.equal(v.href, '/funcs/team-pr-3');
    assert.deepEqual(
      v.functions.map((f) => [f.name, f.tone, f.href]),
      [
        ['a', 'busy', '/funcs/team-pr-3/functions/a'],
        ['b', 'idle', '/funcs/team/functions/b'],
        ['c', 'idle', undefined],
        ['d', 'bad', '/funcs/team-pr-3/functions/d'],
      ],
    );
    assert.equal(previewView({ ...record(4), functions: [] }, 'team').summary, 'not planned yet');
  });

  it('grouped per repository, by number', () => {
    const by = previewsByRepository([record(5), record(2, 'other'), record(1)], 'team');
    assert.deepEqual([...by.entries()].map(([r, list]) => [r, list.map((p) => p.number)]), [
      ['fns', [1, 5]],
      ['other', [2]],
    ]);
  });

  it('the badge only for a namespace that is an open preview of its base', () => {
    assert.deepEqual(previewBadge('team-pr-3', [record(3)]), { number: 3, branch: 'feature-x', baseNamespace: 'team', repository: 'fns', href: '/funcs/team/repositories#pr-3' });
    assert.equal(previewBadge('team-pr-4', [record(3)]), undefined, 'looks like a preview, is none');
    assert.equal(previewBadge('team', [record(3)]), undefined);
  });
});
