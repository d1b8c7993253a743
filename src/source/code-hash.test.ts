import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { CodeFile } from './types.ts';
import { blobOid, codeHash, hashFiles } from './code-hash.ts';
import { ignoreMatcher } from './ignore-rules.ts';

const file = (path: string, content: string, mode: CodeFile['mode'] = '100644'): CodeFile => ({ path, mode, content: Buffer.from(content) });

describe('blobOid', () => {
  it('equals git hash-object for the same bytes', () => {
    for (const content of ['', 'hello\n', 'ü\u0000binary']) {
      const expected = execFileSync('git', ['hash-object', '--stdin'], { input: content }).toString().trim();
      assert.equal(blobOid(Buffer.from(content)), expected);
    }
  });
});

describe('codeHash', () => {
  const a = { hashPath: 'handler.js', mode: '100644', oid: blobOid(Buffer.from('a')) } as const;
  const b = { hashPath: 'lib/x.js', mode: '100644', oid: blobOid(Buffer.from('b')) } as const;

  it('is sha256: and 64 hex digits', () => {
    assert.match(codeHash([a, b]), /^sha256:[0-9a-f]{64}$/);
  });
  it('does not depend on the order of the entries', () => {
    assert.equal(codeHash([a, b]), codeHash([b, a]));
  });
  it('changes with a path, a mode or a content', () => {
    const base = codeHash([a, b]);
    assert.notEqual(codeHash([{ ...a, hashPath: 'main.js' }, b]), base);
    assert.notEqual(codeHash([{ ...a, mode: '100755' }, b]), base);
    assert.notEqual(codeHash([{ ...a, oid: blobOid(Buffer.from('A')) }, b]), base);
  });
  it('keeps an included file apart from an own file of the same relative path', () => {
    assert.notEqual(codeHash([{ ...b, hashPath: '/lib/x.js' }]), codeHash([b]));
  });
  it('is the documented digest: sha256 over sorted "<mode> <oid> <path>\\n" lines', () => {
    const lines = [`100644 ${b.oid} lib/x.js\n`, `100644 ${a.oid} handler.js\n`].sort().join('');
    const expected = execFileSync('sha256sum', { input: lines }).toString().split(' ')[0];
    assert.equal(codeHash([a, b]), `sha256:${expected}`);
  });
});

describe('hashFiles (uploaded code)', () => {
  const files = [file('handler.js', 'x'), file('run.sh', '#!/bin/sh', '100755'), file('link', 'handler.js', '120000')];

  it('leaves out function.yaml, .git and ignored files', () => {
    const base = hashFiles(files);
    assert.equal(hashFiles([...files, file('function.yaml', 'runtime: nodejs20')]), base);
    assert.equal(hashFiles([...files, file('.git/config', '[core]')]), base);
    assert.equal(hashFiles([...files, file('a.test.js', 't')], ['*.test.js']), base);
  });
  it('honours a top-level .slessignore, which itself counts', () => {
    const ignoreFile = file('.slessignore', 'fixtures/\n');
    assert.equal(hashFiles([...files, ignoreFile, file('fixtures/big.json', '{}')]), hashFiles([...files, ignoreFile]));
    assert.notEqual(hashFiles([...files, ignoreFile]), hashFiles(files));
  });
  it('counts a nested function.yaml (only the top-level one is the manifest)', () => {
    assert.notEqual(hashFiles([...files, file('sub/function.yaml', 'x')]), hashFiles(files));
  });
});

describe('ignoreMatcher', () => {
  const cases: Array<[string[], string | undefined, string, boolean]> = [
    [['*.test.js'], undefined, 'a.test.js', true],
    [['*.test.js'], undefined, 'deep/a.test.js', true],
    [['fixtures/'], undefined, 'fixtures/a.json', true],
    [['fixtures/'], undefined, 'fixtures/', true],
    [[], '/build\n# comment\n', 'build', true],
    [[], '/build\n', 'src/build', false],
    [['*.log', '!keep.log'], undefined, 'keep.log', false],
    [['*.log'], undefined, 'handler.js', false],
  ];
  for (const [globs, slessignore, p, expected] of cases) {
    it(`${JSON.stringify(globs)} + ${JSON.stringify(slessignore ?? '')} ${expected ? 'ignores' : 'keeps'} ${p}`, () => {
      assert.equal(ignoreMatcher(globs, slessignore)(p), expected);
    });
  }
});
