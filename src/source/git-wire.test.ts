// The pure parts of the in-process protocol v2 fetch: request encoding, response parsing, shallow files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextShallow } from './git-wire-fetch.ts';
import { fetchRequest, lsRefsRequest, parseFetchResponse, parseLsRefs, pktLine, WireUnsupportedError } from './git-wire.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const band = (n: number, data: Buffer) => {
  const body = Buffer.concat([Buffer.from([n]), data]);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
};

describe('protocol v2 requests', () => {
  it('frames pkt-lines with their length in hex, the 4 digits included', () => {
    assert.equal(pktLine('done\n').toString(), '0009done\n');
  });

  it('asks ls-refs for exactly the branch', () => {
    assert.equal(lsRefsRequest('main').toString(), '0014command=ls-refs\n0001001fref-prefix refs/heads/main\n0000');
  });

  it('fetches one commit at depth 1, telling the shallow boundary and offering the cached head', () => {
    const lines = fetchRequest({ want: A, haves: [B], shallow: [C], depth: 1 }).toString();
    assert.ok(lines.startsWith('0012command=fetch\n0001'));
    for (const l of ['thin-pack', 'ofs-delta', 'deepen 1', `shallow ${C}`, `want ${A}`, `have ${B}`, 'done']) assert.ok(lines.includes(`${l}\n`), l);
    assert.ok(lines.endsWith('done\n0000'));
  });

  it('refuses anything but object ids (no injected lines)', () => {
    assert.throws(() => fetchRequest({ want: `${A}\ndone`, haves: [], shallow: [], depth: 1 }), /not an object id/);
  });
});

describe('protocol v2 responses', () => {
  it('ls-refs: ref name to oid', () => {
    const res = Buffer.concat([pktLine(`${A} refs/heads/main\n`), Buffer.from('0000')]);
    assert.deepEqual([...parseLsRefs(res)], [['refs/heads/main', A]]);
  });

  it('fetch: shallow-info and the pack from side band 1; progress ignored', () => {
    const res = Buffer.concat([
      pktLine('shallow-info\n'),
      pktLine(`shallow ${A}\n`),
      pktLine(`unshallow ${B}\n`),
      Buffer.from('0001'),
      pktLine('packfile\n'),
      band(2, Buffer.from('counting objects\n')),
      band(1, Buffer.from('PACK')),
      band(1, Buffer.from('rest')),
      Buffer.from('0000'),
    ]);
    const parsed = parseFetchResponse(res);
    assert.deepEqual(parsed.shallow, [A]);
    assert.deepEqual(parsed.unshallow, [B]);
    assert.equal(parsed.pack.toString(), 'PACKrest');
  });

  it('an ERR line or an error band is a refusal worth retrying with git fetch; HTML is not v2 at all', () => {
    assert.throws(() => parseFetchResponse(pktLine(`ERR upload-pack: not our ref ${A}`)), (err) => err instanceof WireUnsupportedError && !err.permanent);
    try {
      parseFetchResponse(Buffer.concat([pktLine('packfile\n'), band(3, Buffer.from('boom'))]));
      assert.fail('should throw');
    } catch (err) {
      assert.ok(err instanceof WireUnsupportedError && !err.permanent && /boom/.test(err.message));
    }
    try {
      parseFetchResponse(Buffer.from('<html>'));
      assert.fail('should throw');
    } catch (err) {
      assert.ok(err instanceof WireUnsupportedError && err.permanent);
    }
  });
});

describe('nextShallow', () => {
  it('keeps the old boundary, drops what was unshallowed, adds the new', () => {
    assert.deepEqual(nextShallow([A, B], { shallow: [C], unshallow: [B] }), [A, C]);
    assert.deepEqual(nextShallow([A], { shallow: [A], unshallow: [] }), [A]);
  });
});
