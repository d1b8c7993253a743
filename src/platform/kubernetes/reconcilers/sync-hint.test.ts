import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RepositoryResource } from '../objects/resources.ts';
import { announcesNewHead, syncHint } from './sync-hint.ts';

const HEAD = 'c'.repeat(40);
const repo = (annotations: Record<string, string>, lastHandledRequestedAt?: string, revision?: string): RepositoryResource =>
  ({
    apiVersion: 'sless.kube5s.ru/v1alpha1',
    kind: 'FunctionRepository',
    metadata: { name: 'r', namespace: 'team', annotations },
    spec: { url: 'https://git.example/r.git' },
    ...(lastHandledRequestedAt || revision ? { status: { ...(lastHandledRequestedAt ? { lastHandledRequestedAt } : {}), ...(revision ? { revision } : {}) } } : {}),
  }) as RepositoryResource;

describe('syncHint: the head a pending push webhook named', () => {
  const at = '2026-12-01T18:00:00.000Z';
  it('is passed to the sync while its request is not handled', () => {
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': HEAD })), { head: HEAD });
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': HEAD }, '2026-12-01T17:00:00.000Z')), { head: HEAD });
  });
  it('is not passed again once its request was handled (a later poll asks the server)', () => {
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': HEAD }, at)), {});
  });
  it('is nothing without a request, or when the annotation is not a commit id', () => {
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedRevision': HEAD })), {});
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': 'main' })), {});
    assert.deepEqual(syncHint(repo({ 'sless.kube5s.ru/requestedAt': at })), {});
  });
});

describe('announcesNewHead: a sync that goes before routine ones', () => {
  const at = '2026-12-01T18:00:00.000Z';
  const hinted = { 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': HEAD };
  it('is a pending webhook naming a head the repository has not applied', () => {
    assert.equal(announcesNewHead(repo(hinted, undefined, 'd'.repeat(40))), true);
    assert.equal(announcesNewHead(repo(hinted)), true);
  });
  it('is not a webhook repeating the applied head, a handled one, a request without a head, or an interval resync', () => {
    assert.equal(announcesNewHead(repo(hinted, undefined, HEAD)), false);
    assert.equal(announcesNewHead(repo(hinted, at, 'd'.repeat(40))), false);
    assert.equal(announcesNewHead(repo({ 'sless.kube5s.ru/requestedAt': at })), false);
    assert.equal(announcesNewHead(repo({})), false);
    assert.equal(announcesNewHead(undefined), false);
  });
});
