import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  configHashOf,
  keptImages,
  liveRevision,
  parsePin,
  pinnedMessage,
  recordLive,
  REVISIONS_KEPT,
  rollbackTarget,
  type LiveVersion,
  type Revision,
} from './revisions.ts';

type Config = { readonly env: Record<string, string> };
const t = (minute: number) => `2026-12-06T10:${String(minute).padStart(2, '0')}:00.000Z`;
const version = (code: string, env: Record<string, string> = {}, commit?: string): LiveVersion<Config> => ({
  codeHash: `sha256:${code}`,
  image: `img:${code}`,
  ...(commit ? { commit } : {}),
  configHash: configHashOf({ env }),
  config: { env },
});

/** Revisions after each version went live in turn, one minute apart. */
function history(...versions: LiveVersion<Config>[]): Revision<Config>[] {
  return versions.reduce<Revision<Config>[]>((revs, v, i) => recordLive(revs, v, t(i)), []);
}

describe('revisions: what went live', () => {
  it('numbers each distinct (code, config) that goes live, ending the one before', () => {
    const revs = history(version('a', {}, 'c1'), version('b', {}, 'c2'), version('b', { X: '1' }, 'c3'));
    assert.deepEqual(
      revs.map((r) => [r.revision, r.codeHash, r.liveFrom, r.liveUntil]),
      [
        [1, 'sha256:a', t(0), t(1)],
        [2, 'sha256:b', t(1), t(2)],
        [3, 'sha256:b', t(2), undefined],
      ],
    );
    assert.equal(liveRevision(revs)?.commit, 'c3');
  });

  it('the same code and config going live again is the same revision, live again (a rollback, a revert)', () => {
    const revs = history(version('a'), version('b'), version('a'));
    assert.deepEqual(
      revs.map((r) => [r.revision, r.liveFrom, r.liveUntil]),
      [
        [1, t(2), undefined],
        [2, t(1), t(2)],
      ],
    );
  });

  it('the live version again changes nothing, except a new image of the same code (a new base image)', () => {
    const revs = history(version('a'));
    assert.deepEqual(recordLive(revs, version('a'), t(9)), revs);
    assert.equal(recordLive(revs, { ...version('a'), image: 'img:a2' }, t(9))[0]?.image, 'img:a2');
  });

  it(`keeps the ${REVISIONS_KEPT} most recently live, the live one always among them`, () => {
    const revs = history(...Array.from({ length: 14 }, (_, i) => version(`v${i}`)));
    assert.deepEqual(
      revs.map((r) => r.revision),
      [5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
    );
    // Revision 5 was live again lately: it outlives older-ending ones.
    const again = recordLive(recordLive(revs, version('v4'), t(30)), version('new'), t(31));
    assert.ok(again.some((r) => r.revision === 5));
    assert.ok(!again.some((r) => r.revision === 6));
    assert.equal(again.length, REVISIONS_KEPT);
    assert.deepEqual(keptImages(again).size, REVISIONS_KEPT);
  });

  it('a config is the same config whatever its key order', () => {
    assert.equal(configHashOf({ a: 1, b: { d: 2, c: 3 } }), configHashOf({ b: { c: 3, d: 2 }, a: 1 }));
    assert.notEqual(configHashOf({ a: 1 }), configHashOf({ a: 2 }));
  });
});

describe('revisions: which one a rollback serves', () => {
  const revs = history(version('a'), version('b'), version('c'));

  it('without a number: the highest one below the live one', () => {
    const target = rollbackTarget('f', revs);
    assert.ok(target.ok);
    assert.equal(target.revision.revision, 2);
  });

  it('after rolling back to 2, the one before is 1 (never the bad one after it)', () => {
    const rolled = recordLive(revs, { ...revs[1]! }, t(10));
    const target = rollbackTarget('f', rolled);
    assert.ok(target.ok);
    assert.equal(target.revision.revision, 1);
  });

  it('a named revision that is kept', () => {
    const target = rollbackTarget('f', revs, 1);
    assert.ok(target.ok);
    assert.equal(target.revision.codeHash, 'sha256:a');
  });

  it('says why there is none, in one line naming the kept ones', () => {
    assert.deepEqual(rollbackTarget('f', revs, 7), { ok: false, message: 'function f has no revision 7; its kept revisions are 1, 2, 3' });
    assert.deepEqual(rollbackTarget('f', history(version('a'))), {
      ok: false,
      message: 'function f has no revision before the live one (1); its kept revisions are 1',
    });
    assert.deepEqual(rollbackTarget('f', []), { ok: false, message: 'function f has no revisions yet: nothing of it has served' });
  });
});

describe('revisions: the pinned state', () => {
  it('says which revision serves and what to do', () => {
    assert.equal(
      pinnedMessage({ revision: 3, commit: 'abcdef0123456789' }, true),
      'serving revision 3 (commit abcdef0); git is ahead: push a fix or undo the rollback',
    );
    assert.equal(pinnedMessage({ revision: 2 }, false), 'serving revision 2; newer code and settings wait: upload a fix or undo the rollback');
  });

  it('reads a stored pin, refusing what is not one', () => {
    assert.deepEqual(parsePin('{"revision":2,"since":"2026-12-06T10:00:00Z"}'), { revision: 2, since: '2026-12-06T10:00:00Z' });
    assert.equal(parsePin('{"revision":0,"since":"2026-12-06T10:00:00Z"}'), 'revision must be a whole number >= 1');
    assert.equal(parsePin('{"revision":2}'), 'since must be a time (RFC 3339)');
    assert.equal(parsePin('nope'), 'not JSON: "nope"');
  });
});
