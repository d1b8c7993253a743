// Auth settings that would weaken each other, and what a refused login leaves behind: a log line with
// the reason (never the token) and a count in /metrics.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { createTokenVerifier } from '../../src/auth/token-verifier.ts';
import { hs256Token, NS, SECRET, SUBJECT, testApp } from '../helpers/http-test-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const list = `/v1/namespaces/${NS}/functions`;

describe('auth settings that weaken each other', () => {
  for (const command of ['dev', 'controller']) {
    it(`sless ${command} refuses to start with a JWT secret and SLESS_AUTH_INSECURE=1`, () => {
      const env = { ...process.env, SLESS_AUTH_INSECURE: '1', SLESS_JWT_SECRET: SECRET, SLESS_S3_BUCKET: 'contexts', SLESS_REGISTRY: 'reg.example' };
      const r = spawnSync(process.execPath, [path.join(root, 'bin/sless.js'), command, '--port', '0'], { env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /SLESS_AUTH_INSECURE=1 accepts unsigned tokens, yet SLESS_JWT_SECRET is set/);
    });
  }

  it('a verifier refuses an HS256 secret shorter than 32 bytes', () => {
    assert.throws(() => createTokenVerifier({ key: { kind: 'hs256', secret: 'short' } }), /at least 32/);
  });
});

describe('tokens without exp, and refused logins', async () => {
  const lines: string[] = [];
  const { app, registry } = await testApp({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
  const lenient = await testApp({}, { key: { kind: 'hs256', secret: SECRET }, allowNoExp: true });
  after(async () => {
    await app.close();
    await lenient.app.close();
  });
  const noExp = () => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(SUBJECT).sign(new TextEncoder().encode(SECRET));

  it('refuses a token without exp, unless allowed', async () => {
    const token = await noExp();
    const res = await app.inject({ url: list, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error, /no "exp" claim/);
    assert.equal((await lenient.app.inject({ url: list, headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
  });

  it('logs each refusal with its reason, never the token, and counts it', async () => {
    const forged = await hs256Token({}, { secret: 'another-secret-of-enough-length-0123456789' });
    const expired = await hs256Token({}, { exp: Math.floor(Date.now() / 1000) - 3600 });
    for (const token of [forged, expired]) {
      assert.equal((await app.inject({ url: list, headers: { authorization: `Bearer ${token}` } })).statusCode, 401);
    }
    assert.equal((await app.inject({ url: list })).statusCode, 401);
    const refused = lines.filter((l) => /token refused/.test(l));
    assert.ok(refused.some((l) => /"reason":"bad_signature"/.test(l)), refused.join(''));
    assert.ok(refused.some((l) => /"reason":"expired"/.test(l)));
    assert.ok(refused.some((l) => /"reason":"missing"/.test(l)));
    for (const token of [forged, expired]) {
      assert.ok(!lines.some((l) => l.includes(token) || l.includes(token.split('.')[2] as string)), 'a token reached the log');
    }
    const metrics = await registry.metrics();
    assert.match(metrics, /sless_auth_failures_total\{reason="bad_signature"\} 1/);
    assert.match(metrics, /sless_auth_failures_total\{reason="expired"\} 1/);
    assert.match(metrics, /sless_auth_failures_total\{reason="no_exp"\} 1/);
  });
});
