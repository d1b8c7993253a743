// The pure parts of the git command-line path: listing parsers and error classification.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyGitCliError, parseCatFileBatch, parseTreeListing } from './git-cli.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const R = 'f'.repeat(40);

describe('parseTreeListing', () => {
  it('groups `ls-tree -r -t -z` records into entries per tree oid, empty folders included', () => {
    const listing = [
      `040000 tree ${A}\tfns`,
      `100644 blob ${B}\tfns/function.yaml`,
      `040000 tree ${C}\tfns/empty`,
      `120000 blob ${B}\tlink`,
      '',
    ].join('\0');
    const trees = parseTreeListing(R, listing);
    assert.deepEqual(trees.get(R), [
      { name: 'fns', mode: '040000', oid: A },
      { name: 'link', mode: '120000', oid: B },
    ]);
    assert.deepEqual(trees.get(A), [
      { name: 'function.yaml', mode: '100644', oid: B },
      { name: 'empty', mode: '040000', oid: C },
    ]);
    assert.deepEqual(trees.get(C), []);
  });
  it('keeps tabs and spaces inside file names', () => {
    const trees = parseTreeListing(R, `100755 blob ${A}\ta b\tc.sh\0`);
    assert.deepEqual(trees.get(R), [{ name: 'a b\tc.sh', mode: '100755', oid: A }]);
  });
});

describe('parseCatFileBatch', () => {
  it('reads contents by oid, binary-safe, and skips missing objects', () => {
    const body = Buffer.from([0, 10, 255, 10]);
    const out = Buffer.concat([
      Buffer.from(`${A} blob 4\n`),
      body,
      Buffer.from(`\n${B} missing\n${C} blob 0\n\n`),
    ]);
    const blobs = parseCatFileBatch(out);
    assert.deepEqual(blobs.get(A), body);
    assert.equal(blobs.has(B), false);
    assert.deepEqual(blobs.get(C), Buffer.alloc(0));
  });
});

describe('classifyGitCliError', () => {
  const url = 'https://git.example.com/repo.git';
  const cases: Array<[string, string, string]> = [
    [
      '401',
      "fatal: unable to access 'https://git.example.com/repo.git/': The requested URL returned error: 401",
      'auth',
    ],
    [
      'no prompt',
      "fatal: could not read Username for 'https://git.example.com': terminal prompts disabled",
      'auth',
    ],
    ['404', "fatal: repository 'https://git.example.com/repo.git/' not found", 'not-found'],
    ['branch', "fatal: couldn't find remote ref refs/heads/main", 'branch-not-found'],
    [
      'refused',
      "fatal: unable to access 'https://git.example.com/repo.git/': Failed to connect to git.example.com port 443: Connection refused",
      'unreachable',
    ],
    ['502', 'fatal: unable to access: The requested URL returned error: 502', 'unreachable'],
    ['odd', 'fatal: something else entirely', 'fetch-failed'],
  ];
  for (const [label, stderr, reason] of cases) {
    it(`${label} -> ${reason}`, () => {
      const err = classifyGitCliError(stderr, url, 'fetch');
      assert.equal(err.reason, reason);
      assert.ok(err.message.includes(url));
    });
  }
  it('never repeats credentials from a URL in the output', () => {
    const err = classifyGitCliError(
      "fatal: unable to access 'https://user:s3cret@git.example.com/x': weird",
      url,
      'fetch',
    );
    assert.ok(!err.message.includes('s3cret'), err.message);
  });
});
