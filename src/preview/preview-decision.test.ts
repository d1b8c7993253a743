import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PullRequestEvent } from '../webhook/pull-request.ts';
import { decidePreview, type PreviewDecisionInput } from './preview-decision.ts';
import { checkPreviewNamespace, parsePreviewNamespace, previewNamespace } from './preview-name.ts';
import { previewSettingsOf, type PreviewSettings } from './preview-settings.ts';

const HEAD = 'c'.repeat(40);
const ON: PreviewSettings = { ...(previewSettingsOf({ enabled: true }) as PreviewSettings) };

function event(over: Partial<PullRequestEvent> = {}): PullRequestEvent {
  return { kind: 'pull_request', action: 'opened', providerAction: 'opened', number: 4, baseBranch: 'main', headBranch: 'feature', headSha: HEAD, sameRepository: true, ...over };
}

function decide(over: Partial<PullRequestEvent> = {}, input: Partial<PreviewDecisionInput> = {}) {
  return decidePreview({ event: event(over), namespace: 'team', watchedBranch: 'main', settings: ON, open: [], takenByOther: () => false, ...input });
}

describe('what a pull-request delivery does to previews', () => {
  it('opened, reopened, synchronized against the watched branch: build in <namespace>-pr-<N>', () => {
    for (const action of ['opened', 'reopened', 'synchronized'] as const) {
      const d = decide({ action });
      assert.equal(d.kind, 'build', action);
      assert.deepEqual(d.kind === 'build' && [d.number, d.namespace, d.branch, d.head], [4, 'team-pr-4', 'feature', HEAD]);
    }
  });

  it('previews off (the default): ignored, saying how to turn them on', () => {
    const d = decide({}, { settings: previewSettingsOf(undefined) as PreviewSettings });
    assert.equal(d.kind, 'ignore');
    assert.match(d.kind === 'ignore' ? d.message : '', /spec\.previews\.enabled/);
  });

  it('a number that is not a positive integer, another base branch, a head that is no commit: ignored with why', () => {
    for (const number of [0, -1, 1.5, '4', null]) assert.match(JSON.stringify(decide({ number })), /"ignore".*not a positive integer/);
    assert.match(JSON.stringify(decide({ baseBranch: 'release' })), /"ignore".*targets release; this repository watches main/);
    assert.match(JSON.stringify(decide({ headSha: 'HEAD' })), /"ignore".*not a commit id/);
  });

  it('a fork: refused with a status on its head, whatever else holds', () => {
    const d = decide({ sameRepository: false });
    assert.equal(d.kind, 'refuse');
    assert.match(d.kind === 'refuse' ? d.message : '', /forks are not built/);
    assert.equal(d.kind === 'refuse' && d.head, HEAD);
  });

  it('closed or merged: the preview is removed; without one, ignored', () => {
    const open = [{ number: 4, head: HEAD }];
    assert.deepEqual(decide({ action: 'merged' }, { open }), { kind: 'remove', number: 4, namespace: 'team-pr-4', message: 'pull request #4 merged; removing its preview' });
    assert.equal(decide({ action: 'closed' }, { open }).kind, 'remove');
    assert.equal(decide({ action: 'closed' }).kind, 'ignore');
    // A closed fork PR removes nothing and posts nothing.
    assert.equal(decide({ action: 'closed', sameRepository: false }).kind, 'ignore');
  });

  it('edited: builds only when the head moved', () => {
    assert.equal(decide({ action: 'edited' }, { open: [{ number: 4, head: HEAD }] }).kind, 'ignore');
    assert.equal(decide({ action: 'edited' }, { open: [{ number: 4, head: 'd'.repeat(40) }] }).kind, 'build');
    assert.equal(decide({ action: 'other', providerAction: 'labeled' }).kind, 'ignore');
  });

  it('maxOpen: a new PR past the limit is refused; one already open still updates', () => {
    const open = [1, 2].map((number) => ({ number, head: HEAD }));
    const settings = { ...ON, maxOpen: 2 };
    const d = decide({}, { open, settings });
    assert.equal(d.kind, 'refuse');
    assert.match(d.kind === 'refuse' ? d.message : '', /2 previews are open.*maxOpen 2/);
    assert.equal(decide({ number: 2, action: 'synchronized' }, { open, settings }).kind, 'build');
  });

  it('a namespace name too long or held by something else: refused, never shortened', () => {
    const long = decide({}, { namespace: 'n'.repeat(59) });
    assert.match(JSON.stringify(long), /"refuse".*longer than 63/);
    const taken = decide({}, { takenByOther: (n) => n === 'team-pr-4' });
    assert.match(JSON.stringify(taken), /"refuse".*namespace team-pr-4 exists/);
  });
});

describe('preview namespace names', () => {
  it('<namespace>-pr-<N>, and back', () => {
    assert.equal(previewNamespace('team', 12), 'team-pr-12');
    assert.deepEqual(parsePreviewNamespace('team-pr-12'), { namespace: 'team', number: 12 });
    assert.deepEqual(parsePreviewNamespace('a-pr-1-pr-2'), { namespace: 'a-pr-1', number: 2 });
    assert.equal(parsePreviewNamespace('team'), undefined);
    assert.equal(parsePreviewNamespace('team-pr-01'), undefined);
  });

  it('63 characters fit, 64 do not', () => {
    assert.deepEqual(checkPreviewNamespace('n'.repeat(58), 1, { takenByOther: () => false }), { name: `${'n'.repeat(58)}-pr-1` });
    assert.ok('error' in checkPreviewNamespace('n'.repeat(58), 10, { takenByOther: () => false }));
  });
});

describe('spec.previews defaults', () => {
  it('enabled false, ttl 72h, maxOpen 5, schedules false, secrets none', () => {
    assert.deepEqual(previewSettingsOf(undefined), { enabled: false, ttlMs: 72 * 3_600_000, maxOpen: 5, schedules: false, secrets: 'none' });
  });
  it('a ttl that is no duration names the field', () => {
    assert.deepEqual(previewSettingsOf({ ttl: 'soon' }), { error: 'spec.previews.ttl: "soon" is not a duration like 72h, 30m or 1d' });
    assert.equal((previewSettingsOf({ ttl: '2d' }) as PreviewSettings).ttlMs, 2 * 86_400_000);
  });
});
