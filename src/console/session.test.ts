import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clearedCookie, cookieNameFor, csrfProblem, csrfTokenOf, readCookie, secureCookieFor, sessionCookie, tokenOf } from './session.ts';

// {"sub":"a","exp":2000000000}
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIiwiZXhwIjoyMDAwMDAwMDAwfQ.sig';

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict, scoped to /funcs and lives as long as the token', () => {
    assert.equal(
      sessionCookie(JWT, { secure: true, now: 1_999_999_000_000 }),
      `sless_console=${JWT}; Path=/funcs; HttpOnly; SameSite=Strict; Secure; Max-Age=1000`,
    );
  });
  it('is a session cookie for a token without exp, and not Secure on plain http to another host', () => {
    assert.equal(sessionCookie('a.e30.b', { secure: false }), 'sless_console=a.e30.b; Path=/funcs; HttpOnly; SameSite=Strict');
    assert.equal(secureCookieFor('http', 'sless.internal'), false);
    assert.equal(secureCookieFor('https', 'sless.example.com'), true);
    assert.equal(secureCookieFor('http', 'localhost'), true);
    assert.equal(secureCookieFor('http', '127.0.0.1'), true);
  });
  it('is cleared with Max-Age=0', () => {
    assert.match(clearedCookie(true), /^sless_console=; Path=\/funcs; HttpOnly; SameSite=Strict; Secure; Max-Age=0$/);
  });
  it('is read back from a Cookie header among others; an Authorization header wins', () => {
    assert.equal(readCookie('a=1; sless_console=tok; b=2', 'sless_console'), 'tok');
    assert.equal(readCookie('sless_console=', 'sless_console'), undefined);
    assert.equal(readCookie(undefined, 'sless_console'), undefined);
    assert.deepEqual(tokenOf({ cookie: 'sless_console=tok' }), { token: 'tok', via: 'cookie' });
    assert.deepEqual(tokenOf({ cookie: 'sless_console=tok', authorization: 'Bearer x' }), { token: 'Bearer x', via: 'header' });
    assert.equal(tokenOf({}), undefined);
  });
  it('is named for the port the browser used (cookies ignore ports): one session per sless dev', () => {
    assert.equal(cookieNameFor(8080), 'sless_console_8080');
    assert.equal(cookieNameFor(undefined), 'sless_console', 'no port in the address, as behind an ingress');
    assert.equal(cookieNameFor(443), 'sless_console');
    assert.deepEqual(tokenOf({ cookie: 'sless_console_8080=a; sless_console_8081=b' }, 'sless_console_8081'), { token: 'b', via: 'cookie' });
    assert.equal(tokenOf({ cookie: 'sless_console_8080=a' }, 'sless_console_8081'), undefined);
  });
});

describe('csrfProblem', () => {
  const cookie = { token: JWT, via: 'cookie' as const };
  const ok = { source: cookie, given: csrfTokenOf(JWT), origin: 'http://localhost:8080', fetchSite: 'same-origin', ownHost: 'localhost:8080' };
  it('lets a same-origin request with the session’s token act', () => assert.equal(csrfProblem(ok), undefined));
  it('lets a bearer-token request act without a CSRF token', () =>
    assert.equal(csrfProblem({ ...ok, source: { token: 'Bearer x', via: 'header' }, given: undefined }), undefined));
  it('refuses a cookie request without the token, or with another session’s', () => {
    assert.match(csrfProblem({ ...ok, given: undefined }) ?? '', /CSRF token/);
    assert.match(csrfProblem({ ...ok, given: csrfTokenOf('other') }) ?? '', /CSRF token/);
  });
  it('refuses a request from another origin or site even with the right token', () => {
    assert.match(csrfProblem({ ...ok, origin: 'https://evil.example' }) ?? '', /evil\.example/);
    assert.match(csrfProblem({ ...ok, fetchSite: 'cross-site' }) ?? '', /cross-site/);
    assert.match(csrfProblem({ ...ok, origin: 'null' }) ?? '', /from null/);
  });
  it('takes a same-host Origin whatever its scheme (TLS ends at a proxy in front)', () => {
    assert.equal(csrfProblem({ ...ok, origin: 'https://localhost:8080' }), undefined);
  });
});
