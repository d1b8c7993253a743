// The pure parts of the git source: auth header, URL redaction, error classification, path rules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeIncludePath, symlinkStaysInside } from './function-files.ts';
import { classifyGitError, redactUrl } from './git-source-error.ts';
import { authorizationHeader } from './git-source.ts';

const httpError = (statusCode: number) => Object.assign(new Error(`HTTP Error: ${statusCode}`), { code: 'HttpError', data: { statusCode, statusMessage: '', response: '' } });
const netError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe('authorizationHeader', () => {
  it('sends a token as the basic-auth password, user+password as they are', () => {
    assert.equal(authorizationHeader({ token: 't0k' }), `Basic ${Buffer.from('x-access-token:t0k').toString('base64')}`);
    assert.equal(authorizationHeader({ username: 'u', password: 'p:w' }), `Basic ${Buffer.from('u:p:w').toString('base64')}`);
    assert.equal(authorizationHeader(undefined), undefined);
  });
});

describe('redactUrl', () => {
  for (const [input, expected] of [
    ['https://user:secret@git.example.com/org/repo.git', 'https://git.example.com/org/repo.git'],
    ['https://token@git.example.com/repo.git', 'https://git.example.com/repo.git'],
    ['http://127.0.0.1:3000/repo.git', 'http://127.0.0.1:3000/repo.git'],
    ['not a url //user:pw@host/x', 'not a url //host/x'],
  ]) {
    it(`${input} -> ${expected}`, () => assert.equal(redactUrl(input as string), expected));
  }
});

describe('classifyGitError', () => {
  const url = 'https://git.example.com/repo.git';
  const cases: Array<[string, unknown, string, boolean]> = [
    ['401', httpError(401), 'auth', false],
    ['403', httpError(403), 'auth', false],
    ['404', httpError(404), 'not-found', false],
    ['502', httpError(502), 'unreachable', true],
    ['418', httpError(418), 'not-git', false],
    ['connection refused', netError('ECONNREFUSED'), 'unreachable', true],
    ['DNS failure wrapped in a cause', new Error('fetch failed', { cause: netError('ENOTFOUND') }), 'unreachable', true],
    ['undici timeout', netError('UND_ERR_HEADERS_TIMEOUT'), 'unreachable', true],
    ['not smart HTTP', Object.assign(new Error('x'), { code: 'SmartHttpError' }), 'not-git', false],
    ['anything else', new Error('boom'), 'fetch-failed', true],
  ];
  for (const [what, err, reason, retryable] of cases) {
    it(`${what} -> ${reason}`, () => {
      const e = classifyGitError(err, url, 'fetch');
      assert.equal(e.reason, reason);
      assert.equal(e.retryable, retryable);
      assert.ok(e.message.includes(url));
      assert.equal(e.cause, err);
    });
  }
  it('strips credentials from a message it passes on', () => {
    const e = classifyGitError(new Error('failed https://u:pw@h/r.git'), url, 'fetch');
    assert.ok(!e.message.includes('pw'), e.message);
  });
});

describe('include paths and symlinks never leave the repository', () => {
  const includes: Array<[string, string | RegExp]> = [
    ['lib/common', 'lib/common'],
    ['./lib//common/', 'lib/common'],
    ['../lib', /must not contain "\.\."/],
    ['lib/../../x', /must not contain "\.\."/],
    ['/etc', /repository-relative/],
    ['C:\\x', /repository-relative/],
    ['.', /whole repository/],
    ['', /must not be empty/],
  ];
  for (const [raw, expected] of includes) {
    it(`include ${JSON.stringify(raw)}`, () => {
      const r = normalizeIncludePath(raw);
      if (typeof expected === 'string') assert.deepEqual(r, { path: expected });
      else assert.match('error' in r ? r.error : '', expected);
    });
  }
  const links: Array<[string, string, boolean]> = [
    ['a.js', 'b.js', true],
    ['sub/a.js', '../b.js', true],
    ['sub/a.js', '../../b.js', false],
    ['a.js', '/etc/passwd', false],
    ['a.js', '.', false],
    ['a.js', '', false],
    ['sub/a.js', 'x/../../y', true],
  ];
  for (const [link, target, inside] of links) {
    it(`symlink ${link} -> ${target} ${inside ? 'stays inside' : 'leaves'}`, () => assert.equal(symlinkStaysInside(link, target), inside));
  }
});
