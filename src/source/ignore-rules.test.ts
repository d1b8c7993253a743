// Ignore patterns are matched in linear time with the `ignore` library's meaning (issue 31 item 2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ignorePkg from 'ignore';
import { ignoreMatcher, ignoreProblems, IgnorePatternError, MAX_IGNORE_PATTERN_LENGTH, MAX_IGNORE_PATTERNS } from './ignore-rules.ts';

const ignore = ignorePkg.default;
const DEEP = `${Array.from({ length: 30 }, (_, i) => `d${i}`).join('/')}/file.js`;

describe('ignore patterns', () => {
  it('mean what the ignore library says they mean (a corpus of patterns and paths)', () => {
    const patterns = ['*.log', '**/x', 'a/**/b', '/root', 'dir/', 'a?c', '[a-c]x', '[!a]', 'foo/**', '**/foo/**/*.js', 'x\\ ', '\\#h', 'a\\d', 'ñ*', 'A*', '*.TXT', '[Z-a]', '[]x', 'a[]]', 'build', '!build/keep.txt', '# comment', '', '  ', 'node_modules/', '**/*.min.*', 'docs/*.md', '*~'];
    const paths = ['a.log', 'x', 'd/x', 'a/b', 'a/q/b', 'a/q/r/b', 'root', 'q/root', 'dir/', 'dir/f', 'abc', 'bx', '!', 'foo/bar', 'z/foo/q/w.js', 'x ', '#h', 'a1', 'ñññ', 'X.txt', DEEP, '_', ']x', 'a]', 'build/keep.txt', 'build/other', 'node_modules/p/i.js', 'lib/j.min.js', 'docs/a.md', 'docs/x/a.md', 'f.txt~'];
    for (const p of patterns) {
      const mine = ignoreMatcher([p]);
      const theirs = ignore().add(p);
      for (const path of paths) assert.equal(mine(path), theirs.ignores(path), `${JSON.stringify(p)} on ${path}`);
    }
    const all = ignoreMatcher(patterns.slice(0, 12), patterns.slice(12).join('\n'));
    const lib = ignore().add(patterns.slice(0, 12)).add(patterns.slice(12).join('\n'));
    for (const path of paths) assert.equal(all(path), lib.ignores(path), path);
  });

  it('run in linear time: `**/` 16 times and `*a` 8 times take milliseconds, not hours', () => {
    const started = Date.now();
    assert.equal(ignoreMatcher([`${'**/'.repeat(16)}x`])(DEEP), false);
    assert.equal(ignoreMatcher([], `${'*a'.repeat(8)}b\n`)('a'.repeat(250)), false);
    assert.equal(ignoreMatcher([`${'**/'.repeat(16)}file.js`])(DEEP), true);
    assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
  });

  it('refuse a pattern too long, too many patterns, and what the linear matcher cannot take, saying where', () => {
    assert.deepEqual(ignoreProblems(['*.log', 'x'.repeat(MAX_IGNORE_PATTERN_LENGTH + 1)]).map((p) => [p.source, p.index]), [['ignore', 1]]);
    const long = ignoreProblems([], `ok\n${' '.repeat(5000)}x\n`);
    assert.deepEqual(long.map((p) => [p.source, p.index]), [['slessignore', 2]]);
    assert.match(long[0]!.message, /5001 characters long; at most 1024/);
    const many = ignoreProblems([], Array.from({ length: MAX_IGNORE_PATTERNS + 1 }, (_, i) => `f${i}`).join('\n'));
    assert.match(many[0]?.message ?? '', /1001 ignore patterns; at most 1000/);
    assert.throws(() => ignoreMatcher(['y'.repeat(2000)]), (e: unknown) => e instanceof IgnorePatternError && /^ignore\[0\]: the pattern is 2000 characters long/.test(e.message));
    assert.deepEqual(ignoreProblems(['**/node_modules/**', '*.test.*'], '# tests\n/coverage\n!keep\n'), []);
  });
});
