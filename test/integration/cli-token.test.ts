// `sless token`: a token signed with the configured HS256 secret is accepted by the real /v1 of an
// app whose auth comes from the same settings (authOptionsOf, as `sless controller` builds it), owns the
// namespace the command prints, and carries the admin claim only with --admin. JWKS, a public key,
// insecure mode and a missing secret are refused with the reason and what to do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { authOptionsOf } from '../../src/auth/auth-options.ts';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { ConfigError } from '../../src/config/config.ts';
import { loadTokenConfig } from '../../src/config/tool-settings.ts';
import { run } from '../../src/cli/token.ts';
import { testApp } from '../helpers/http-test-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SECRET = 'token-test-secret-0123456789abcdef0123456789';
const env = { SLESS_JWT_SECRET: SECRET, SLESS_JWT_ISSUER: 'https://sless.example', SLESS_JWT_AUDIENCE: 'sless', SLESS_ADMIN_CLAIM: 'platform_admin' };

function capture(): { io: { stdout: Writable; stderr: Writable }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        add(chunk.toString());
        done();
      },
    });
  return { io: { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)) }, out: () => out, err: () => err };
}

async function token(argv: string[], withEnv: Record<string, string> = env): Promise<{ token: string; stderr: string }> {
  const c = capture();
  assert.equal(await run(argv, c.io, withEnv), 0);
  const lines = c.out().split('\n').filter(Boolean);
  assert.equal(lines.length, 1, 'stdout holds the token alone');
  return { token: lines[0] ?? '', stderr: c.err() };
}

describe('sless token', async () => {
  // The app's auth from the same settings the token command read, as the controller builds it.
  const { app } = await testApp({}, authOptionsOf({ ...loadTokenConfig(['--subject', 'x'], env), jwtAllowNoExp: false }));
  after(() => app.close());
  const list = async (ns: string, t: string) => (await app.inject({ url: `/v1/namespaces/${ns}/functions`, headers: { authorization: `Bearer ${t}` } })).statusCode;

  it('signs a token the real /v1 accepts, for the namespace it prints', async () => {
    const { token: t, stderr } = await token(['--subject', 'team-a']);
    const ns = namespaceForSubject('team-a');
    assert.match(stderr, new RegExp(`subject "team-a" owns namespace ${ns}`));
    assert.equal(await list(ns, t), 200);
    assert.equal(await list('team-b', t), 403, 'not an admin: only its own namespace');
    const claims = decodeJwt(t);
    assert.equal(claims.iss, 'https://sless.example');
    assert.equal(claims.aud, 'sless');
    assert.equal(claims.sub, 'team-a');
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 30 * 86_400, 'default lifetime 30d');
    assert.equal(claims.platform_admin, undefined);
  });

  it('--admin adds the configured admin claim: every namespace', async () => {
    const { token: t, stderr } = await token(['--subject', 'ops', '--admin', '--ttl', '12h']);
    assert.match(stderr, /admin \(platform_admin: true\)/);
    assert.equal(await list('team-b', t), 200);
    const claims = decodeJwt(t);
    assert.equal(claims.platform_admin, true);
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 12 * 3600);
  });

  it('a token signed with another secret is refused by the same /v1', async () => {
    const { token: t } = await token(['--subject', 'team-a'], { ...env, SLESS_JWT_SECRET: 'another-secret-0123456789abcdef0123456789' });
    assert.equal(await list(namespaceForSubject('team-a'), t), 401);
  });

  const refusals: Array<[string, Record<string, string>, string[], RegExp]> = [
    ['a JWKS configuration', { SLESS_JWKS_URL: 'https://id.example/jwks.json', SLESS_JWT_ISSUER: 'https://id.example', SLESS_JWT_AUDIENCE: 'sless' }, ['--subject', 'a'], /SLESS_JWKS_URL \(https:\/\/id\.example\/jwks\.json\): tokens come from that identity provider.*"iss": "https:\/\/id\.example", "aud": "sless"/],
    ['a public key configuration', { SLESS_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----' }, ['--subject', 'a'], /SLESS_JWT_PUBLIC_KEY: sign them with its private key/],
    ['insecure mode', { SLESS_AUTH_INSECURE: '1' }, ['--subject', 'a'], /SLESS_AUTH_INSECURE=1 accepts unsigned tokens: there is no secret to sign with/],
    ['no secret', {}, ['--subject', 'a'], /no SLESS_JWT_SECRET: set it to the controller's secret/],
    ['a short secret', { SLESS_JWT_SECRET: 'short' }, ['--subject', 'a'], /bad setting SLESS_JWT_SECRET=.*at least 32 bytes/],
    ['no subject', { SLESS_JWT_SECRET: SECRET }, [], /missing setting --subject/],
    ['a bad lifetime', { SLESS_JWT_SECRET: SECRET }, ['--subject', 'a', '--ttl', '1y'], /bad setting --ttl="1y": a lifetime like 30d/],
  ];
  for (const [what, withEnv, argv, message] of refusals) {
    it(`refuses ${what}, saying why`, async () => {
      const c = capture();
      await assert.rejects(run(argv, c.io, withEnv), (err: unknown) => err instanceof ConfigError && message.test(err.message));
      assert.equal(c.out(), '', 'no token printed');
    });
  }

  it('from the command line: the token on stdout, the namespace on stderr; a refusal exits 2 with one line', () => {
    const sless = (args: string[], extra: Record<string, string>) =>
      spawnSync(process.execPath, [path.join(root, 'bin/sless.js'), 'token', ...args], { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', ...extra } });
    const ok = sless(['--subject', 'team-a'], { SLESS_JWT_SECRET: SECRET });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
    assert.match(ok.stderr, new RegExp(namespaceForSubject('team-a')));
    const refused = sless(['--subject', 'team-a'], { SLESS_JWKS_URL: 'https://id.example/jwks.json', SLESS_JWT_ANY_ISSUER_AUDIENCE: '1' });
    assert.equal(refused.status, 2);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^sless token: the configuration verifies tokens with SLESS_JWKS_URL/);
  });
});
