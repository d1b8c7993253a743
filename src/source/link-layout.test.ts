import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkLayoutProblems, type LayoutEntry } from './link-layout.ts';

const link = (path: string, target: string): LayoutEntry => ({ path, mode: '120000', target });
const file = (path: string): LayoutEntry => ({ path, mode: '100644' });
const refused = (entries: LayoutEntry[]) => linkLayoutProblems(entries).map((p) => p.path);

describe('link layout', () => {
  it('keeps links that resolve inside, directly or through other links', () => {
    assert.deepEqual(refused([file('lib/a.js'), link('cur', 'lib'), link('x', 'cur/a.js'), link('lib/self', 'a.js'), link('dangling', 'nope/z')]), []);
  });
  it('refuses links out of the folder, to it, absolute ones, and loops', () => {
    assert.deepEqual(refused([link('up', '..')]), ['up']);
    assert.deepEqual(refused([link('dot', '.')]), ['dot']);
    assert.deepEqual(refused([link('abs', '/etc/passwd')]), ['abs']);
    assert.deepEqual(refused([link('l1', 'l2'), link('l2', 'l1')]).sort(), ['l1', 'l2']);
  });
  it('refuses a chain whose links look harmless one by one', () => {
    // d/e/up -> .. is d on disk, so d/e/up/../.. is the folder's parent, though it reads as d.
    assert.deepEqual(refused([link('d/e/up', '..'), link('k', 'd/e/up/../..')]), ['k']);
  });
  it('refuses anything that would be written through a link', () => {
    assert.deepEqual(refused([file('lib/real.js'), link('l', 'lib'), file('l/x.js')]), ['l/x.js']);
    assert.deepEqual(refused([link('a', 'lib'), link('a/b', 'c'), file('lib/c')]), ['a/b']);
  });
});
