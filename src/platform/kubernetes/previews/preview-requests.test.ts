import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { previewSettingsOf, type PreviewSettings } from '../../../preview/preview-settings.ts';
import type { PullRequestEvent } from '../../../webhook/pull-request.ts';
import { expiredPreviews, nextExpiryMs, previewRequestAnnotation, previewRequests, previewRequestsFingerprint, type PreviewEntry } from './preview-requests.ts';

const HEAD = 'c'.repeat(40);
const event = (over: Partial<PullRequestEvent> = {}): PullRequestEvent => ({
  kind: 'pull_request',
  action: 'opened',
  providerAction: 'opened',
  number: 4,
  baseBranch: 'main',
  headBranch: 'feature',
  headSha: HEAD,
  sameRepository: true,
  ...over,
});

describe('pull-request deliveries recorded on the FunctionRepository for the leader', () => {
  it('one annotation per PR, read back as the same event and arrival time', () => {
    const { key, value } = previewRequestAnnotation(4, event(), '2026-12-06T12:00:00.000Z');
    assert.equal(key, 'preview.sless.kube5s.ru/pr-4');
    const [r] = previewRequests({ [key]: value, 'other/annotation': 'x' });
    assert.deepEqual(r, { number: 4, event: event(), at: '2026-12-06T12:00:00.000Z', key, value });
  });

  it('values that are no recorded delivery (edited by hand) are skipped; the list is sorted by number', () => {
    const a = previewRequestAnnotation(12, event({ number: 12 }), 't');
    const b = previewRequestAnnotation(3, event({ number: 3, action: 'closed' }), 't');
    const read = previewRequests({
      [a.key]: a.value,
      [b.key]: b.value,
      'preview.sless.kube5s.ru/pr-x': a.value,
      'preview.sless.kube5s.ru/pr-5': '{not json',
      'preview.sless.kube5s.ru/pr-6': JSON.stringify({ action: 'exploded', at: 't' }),
    });
    assert.deepEqual(read.map((r) => [r.number, r.event.action]), [[3, 'closed'], [12, 'opened']]);
  });

  it('the fingerprint changes when a delivery is recorded or handled, so the controller reconciles', () => {
    const a = previewRequestAnnotation(4, event(), 't1');
    const b = previewRequestAnnotation(4, event({ action: 'synchronized' }), 't2');
    assert.equal(previewRequestsFingerprint({}), '');
    assert.notEqual(previewRequestsFingerprint({ [a.key]: a.value }), previewRequestsFingerprint({ [b.key]: b.value }));
  });
});

describe('which previews expire', () => {
  const on = previewSettingsOf({ enabled: true, ttl: '1h' }) as PreviewSettings;
  const entry = (number: number, updatedAt: string): PreviewEntry => ({ number, namespace: `team-pr-${number}`, branch: 'b', head: HEAD, updatedAt, planned: true });
  const now = Date.parse('2026-12-06T12:00:00Z');
  const entries = [entry(1, '2026-12-06T10:59:59Z'), entry(2, '2026-12-06T11:30:00Z')];

  it('ttl after the last push; every preview once previews are turned off', () => {
    assert.deepEqual(expiredPreviews(entries, on, now).map((e) => e.number), [1]);
    assert.deepEqual(expiredPreviews(entries, { ...on, enabled: false }, now).map((e) => e.number), [1, 2]);
    assert.deepEqual(expiredPreviews(entries, { error: 'bad ttl' }, now), []);
  });

  it('the next look is when the next one expires, at least a second away', () => {
    assert.equal(nextExpiryMs([entries[1]!], on, now), 30 * 60_000);
    assert.equal(nextExpiryMs(entries, on, now), 1000);
    assert.equal(nextExpiryMs([], on, now), undefined);
  });
});
