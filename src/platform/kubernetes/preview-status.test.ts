import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { previewEntriesOf, previewEntryFor, previewRecords, trimPreviewStatus } from './preview-status.ts';

const HEAD = 'a'.repeat(40);
const entry = {
  number: 3,
  namespace: 'team-pr-3',
  branch: 'feature-x',
  head: HEAD,
  updatedAt: '2026-12-06T10:00:00Z',
  planned: true,
  functions: [
    { name: 'changed', state: 'built', path: 'changed' },
    { name: 'same', state: 'production', path: 'same' },
    { name: 'gone', state: 'removed', path: 'gone' },
    { name: 'broken', state: 'failed', path: 'broken', error: 'function.yaml:2: runtime: required' },
  ],
};
const repo = { metadata: { name: 'functions', namespace: 'team' }, spec: { url: 'https://git/x.git', previews: { enabled: true, ttl: '30m' } }, status: { revision: HEAD, previews: [entry] } };

describe('status.previews as /fn and /v1 read it', () => {
  it('keeps what they read of each entry', () => {
    assert.deepEqual(previewEntriesOf(repo.status), [
      {
        ...entry,
        functions: [
          { name: 'changed', state: 'built' },
          { name: 'same', state: 'production' },
          { name: 'gone', state: 'removed' },
          { name: 'broken', state: 'failed' },
        ],
      },
    ]);
  });

  it('leaves out what does not have the shape, never throws', () => {
    for (const status of [undefined, null, 'x', {}, { previews: 'x' }, { previews: [null, 4, { number: '3', namespace: 'a' }, { namespace: 'a' }] }]) {
      assert.deepEqual(previewEntriesOf(status), []);
    }
    const [e] = previewEntriesOf({ previews: [{ number: 1, namespace: 'a-pr-1', functions: [{ name: 'f', state: 'odd' }, { state: 'built' }, { name: 'g', state: 'built' }] }] });
    assert.deepEqual(e, { number: 1, namespace: 'a-pr-1', branch: '', head: '', updatedAt: '', planned: false, functions: [{ name: 'g', state: 'built' }] });
  });

  it('the serving watch keeps status.previews only, and no status without previews', () => {
    assert.deepEqual(Object.keys(trimPreviewStatus(repo.status) ?? {}), ['previews']);
    assert.equal(trimPreviewStatus({ revision: HEAD }), undefined);
  });

  it('finds the preview of a namespace among the repositories', () => {
    assert.equal(previewEntryFor([{ status: {} }, repo], 'team-pr-3')?.number, 3);
    assert.equal(previewEntryFor([repo], 'team-pr-4'), undefined);
  });
});

describe('the previews /v1 lists', () => {
  it('expires ttl after the last push, URLs of the preview or production, the phase of built functions', () => {
    const phases: Record<string, 'Ready' | 'Failed'> = { 'team-pr-3/changed': 'Ready', 'team-pr-3/broken': 'Failed', 'team/same': 'Ready' };
    const [p] = previewRecords({ repositories: [repo], phaseOf: (ns, name) => phases[`${ns}/${name}`], publicBaseUrl: 'https://fn.example/' });
    assert.deepEqual(p, {
      number: 3,
      namespace: 'team-pr-3',
      repository: 'functions',
      branch: 'feature-x',
      head: HEAD,
      url: 'https://fn.example/fn/team-pr-3/',
      expiresAt: '2026-12-06T10:30:00.000Z',
      functions: [
        { name: 'changed', state: 'built', phase: 'Ready', url: 'https://fn.example/fn/team-pr-3/changed' },
        { name: 'same', state: 'production', url: 'https://fn.example/fn/team/same' },
        { name: 'gone', state: 'removed' },
        { name: 'broken', state: 'failed', phase: 'Failed' },
      ],
    });
  });

  it('the default ttl (72h) when spec.previews has none; sorted by number', () => {
    const second = { ...entry, number: 1, namespace: 'team-pr-1' };
    const r = { ...repo, spec: { url: 'u' }, status: { previews: [entry, second] } };
    const list = previewRecords({ repositories: [r], phaseOf: () => undefined, publicBaseUrl: undefined });
    assert.deepEqual(list.map((p) => [p.number, p.expiresAt, p.url]), [
      [1, '2026-12-09T10:00:00.000Z', '/fn/team-pr-1/'],
      [3, '2026-12-09T10:00:00.000Z', '/fn/team-pr-3/'],
    ]);
  });
});
