import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routePreview, type PreviewView } from './preview-route.ts';

const PREVIEW: PreviewView = {
  number: 7,
  planned: true,
  functions: [
    { name: 'changed', state: 'built' },
    { name: 'same', state: 'production' },
    { name: 'gone', state: 'removed' },
    { name: 'broken', state: 'failed' },
  ],
};

const route = (name: string, ownFunction = false, preview: PreviewView | null = PREVIEW) => routePreview({ preview: preview ?? undefined, name, ownFunction });

describe('where a call at a preview URL goes', () => {
  it('a function the PR changes answers from the preview namespace', () => {
    assert.deepEqual(route('changed', true), { kind: 'preview' });
  });

  it('a function the PR leaves alone answers from production, even while a Function an earlier push built is still there', () => {
    assert.deepEqual(route('same'), { kind: 'production' });
    assert.deepEqual(route('same', true), { kind: 'production' });
  });

  it('a function the PR deletes answers 404, even before its leftover is gone', () => {
    assert.deepEqual(route('gone'), { kind: 'not-found' });
    assert.deepEqual(route('gone', true), { kind: 'not-found' });
  });

  it('a broken function answers 404, or from its last good preview build', () => {
    assert.deepEqual(route('broken'), { kind: 'not-found' });
    assert.deepEqual(route('broken', true), { kind: 'preview' });
  });

  it('a name the PR does not have answers 404', () => {
    assert.deepEqual(route('unknown'), { kind: 'not-found' });
  });

  it('a built function whose Function is not there yet answers 503 saying it is building', () => {
    assert.deepEqual(route('changed'), { kind: 'not-ready', reason: 'the preview of pull request #7 is building changed' });
  });

  it('before the PR is first read and planned: 503 "still being read" for every name', () => {
    const reading: PreviewView = { number: 7, planned: false, functions: [] };
    assert.deepEqual(route('changed', false, reading), { kind: 'not-ready', reason: 'the preview of pull request #7 is still being read' });
    assert.deepEqual(route('anything', false, reading), { kind: 'not-ready', reason: 'the preview of pull request #7 is still being read' });
  });

  it('no open preview in that namespace: served as any namespace, but a closed preview’s leftover answers 404', () => {
    assert.deepEqual(route('changed', true, null), { kind: 'not-a-preview' });
    assert.deepEqual(routePreview({ preview: undefined, name: 'changed', ownFunction: true, previewBuilt: true }), { kind: 'not-found' });
  });
});
