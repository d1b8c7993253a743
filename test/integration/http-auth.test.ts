// /v1 auth with real JWTs signed by generated keys: HS256, PEM public keys, a JWKS served on
// loopback (with key rotation), and the insecure mode. Auth guards /v1 only.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { hs256Token, NS, SECRET, SUBJECT, testApp, upstream } from '../helpers/http-test-kit.ts';

const list = (ns: string) => `/v1/namespaces/${ns}/functions`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('namespace derivation', () => {
  it('is "sless-" + the first 16 hex digits of sha256(sub)', () => {
    // sha256("alice@example.com") = ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976
    assert.equal(namespaceForSubject('alice@example.com'), 'sless-ff8d9819fc0e12bf');
  });
});

describe('HS256 tokens', async () => {
  const { app } = await testApp({}, { key: { kind: 'hs256', secret: SECRET }, issuer: 'https://id.example', audience: 'sless' });
  after(() => app.close());
  const good = (claims: Record<string, unknown> = {}) => hs256Token({ iss: 'https://id.example', aud: 'sless', ...claims });

  const cases: Array<[string, () => Promise<Record<string, string>>, number, RegExp]> = [
    ['no Authorization header', async () => ({}), 401, /missing Authorization header/],
    ['not a bearer header', async () => ({ authorization: 'Basic abc' }), 401, /not "Bearer <JWT>"/],
    ['garbage token', async () => bearer('not.a.jwt'), 401, /not acceptable|well-formed|could not be verified/],
    [
      'expired token',
      async () => bearer(await hs256Token({ iss: 'https://id.example', aud: 'sless' }, { exp: Math.floor(Date.now() / 1000) - 3600 })),
      401,
      /expired/,
    ],
    [
      'nbf in the future',
      async () => bearer(await hs256Token({ iss: 'https://id.example', aud: 'sless' }, { nbf: Math.floor(Date.now() / 1000) + 3600 })),
      401,
      /not valid yet/,
    ],
    [
      'wrong signature',
      async () => bearer(await hs256Token({ iss: 'https://id.example', aud: 'sless' }, { secret: 'another-secret-of-enough-length-012345' })),
      401,
      /signature does not verify/,
    ],
    ['wrong issuer', async () => bearer(await hs256Token({ iss: 'https://evil.example', aud: 'sless' })), 401, /another issuer/],
    ['wrong audience', async () => bearer(await hs256Token({ iss: 'https://id.example', aud: 'other' })), 401, /another audience/],
  ];
  for (const [what, headers, status, message] of cases) {
    it(`refuses ${what} with ${status}`, async () => {
      const res = await app.inject({ url: list(NS), headers: await headers() });
      assert.equal(res.statusCode, status);
      assert.equal(res.json().code, 'unauthorized');
      assert.match(res.json().error, message);
    });
  }

  it('accepts a token with a small clock skew on exp', async () => {
    const token = await hs256Token({ iss: 'https://id.example', aud: 'sless' }, { exp: Math.floor(Date.now() / 1000) - 5 });
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
  });

  it("lets a caller into its own namespace only, 403 elsewhere", async () => {
    const token = await good();
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
    const other = await app.inject({ url: list('sless-0000000000000000'), headers: bearer(token) });
    assert.equal(other.statusCode, 403);
    assert.deepEqual(other.json(), { error: `this token owns namespace ${NS}, not sless-0000000000000000`, code: 'forbidden' });
    const ensureOther = await app.inject({ method: 'POST', url: '/v1/namespaces/team-a/ensure', headers: bearer(token) });
    assert.equal(ensureOther.statusCode, 403);
    const ensureOwn = await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}/ensure`, headers: bearer(token) });
    assert.equal(ensureOwn.statusCode, 200);
  });

  it('lets a token with the admin claim into every namespace (only when the claim is true)', async () => {
    assert.equal((await app.inject({ url: list('team-a'), headers: bearer(await good({ sless_admin: true })) })).statusCode, 200);
    assert.equal((await app.inject({ url: list('team-a'), headers: bearer(await good({ sless_admin: 'true' })) })).statusCode, 403);
  });

  it('guards /v1 only: /fn, /hooks, health and the OpenAPI document need no token', async () => {
    assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/v1/openapi.json' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/fn/dev/missing' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'POST', url: '/hooks/dev/missing', payload: '{}' })).statusCode, 404);
  });
});

describe('a configurable admin claim', async () => {
  const { app } = await testApp({}, { key: { kind: 'hs256', secret: SECRET }, adminClaim: 'is_root' });
  after(() => app.close());
  it('grants every namespace by the configured claim, not the default one', async () => {
    assert.equal((await app.inject({ url: list('team-a'), headers: bearer(await hs256Token({ is_root: true })) })).statusCode, 200);
    assert.equal((await app.inject({ url: list('team-a'), headers: bearer(await hs256Token({ sless_admin: true })) })).statusCode, 403);
  });
});

describe('PEM public keys', () => {
  for (const [type, alg, opts] of [
    ['rsa', 'RS256', { modulusLength: 2048 }],
    ['ec', 'ES256', { namedCurve: 'P-256' }],
  ] as const) {
    it(`verifies ${alg} tokens against a ${type.toUpperCase()} PEM key`, async () => {
      const pair = generateKeyPairSync(type as 'rsa', opts as { modulusLength: number });
      const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const { app } = await testApp({}, { key: { kind: 'public-key', pem } });
      const token = await new SignJWT({}).setProtectedHeader({ alg }).setSubject(SUBJECT).setExpirationTime('5m').sign(pair.privateKey);
      assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
      const hs = await hs256Token();
      assert.equal((await app.inject({ url: list(NS), headers: bearer(hs) })).statusCode, 401);
      await app.close();
    });
  }
});

describe('a JWKS served on loopback', async () => {
  const keys: Array<{ kid: string; privateKey: CryptoKey; jwk: JWK }> = [];
  let served: JWK[] = [];
  let fetches = 0;
  const jwks = await upstream((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: served }));
  });
  const addKey = async (kid: string) => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    keys.push({ kid, privateKey, jwk });
    return { kid, privateKey, jwk };
  };
  const sign = (k: { kid: string; privateKey: CryptoKey }) =>
    new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: k.kid }).setSubject(SUBJECT).setExpirationTime('5m').sign(k.privateKey);
  const { app } = await testApp({}, { key: { kind: 'jwks', url: `${jwks.url}/.well-known/jwks.json`, cooldownMs: 0 } });
  after(async () => {
    await app.close();
    await jwks.close();
  });

  it('verifies tokens with the served keys and caches the set', async () => {
    const first = await addKey('k1');
    served = [first.jwk];
    const token = await sign(first);
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
    assert.equal(fetches, 1);
  });

  it('refetches the set when a token names an unknown kid (key rotation)', async () => {
    const second = await addKey('k2');
    served = [second.jwk];
    const before = fetches;
    assert.equal((await app.inject({ url: list(NS), headers: bearer(await sign(second)) })).statusCode, 200);
    assert.equal(fetches, before + 1);
  });

  it('accepts only the pinned algorithms, even when the set serves a key for another one', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    served = [...served, { ...(await exportJWK(publicKey)), kid: 'ec1', alg: 'ES256', use: 'sig' }];
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'ec1' }).setSubject(SUBJECT).setExpirationTime('5m').sign(privateKey);
    const pinned = await testApp({}, { key: { kind: 'jwks', url: `${jwks.url}/.well-known/jwks.json`, cooldownMs: 0, algorithms: ['RS256'] } });
    try {
      const res = await pinned.app.inject({ url: list(NS), headers: bearer(token) });
      assert.equal(res.statusCode, 401);
      assert.match(res.json().error, /algorithm this server does not accept/);
    } finally {
      await pinned.app.close();
    }
    // The default pin (RS256, ES256) takes it.
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
  });

  it('refuses a token whose kid is in no served key', async () => {
    const stranger = await addKey('k3');
    const res = await app.inject({ url: list(NS), headers: bearer(await sign(stranger)) });
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error, /no key of the configured JWKS matches/);
  });
});

describe('insecure mode', async () => {
  const lines: string[] = [];
  const { app } = await testApp({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } }, { key: { kind: 'insecure' } });
  after(() => app.close());
  const unsigned = (payload: object) =>
    `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;

  it('warns at start', () => {
    assert.ok(lines.some((l) => /AUTH IS INSECURE/.test(l) && /"level":40/.test(l)), lines.join(''));
  });

  it('accepts unsigned tokens but still derives the namespace and checks it', async () => {
    const token = unsigned({ sub: SUBJECT, exp: Math.floor(Date.now() / 1000) + 600 });
    assert.equal((await app.inject({ url: list(NS), headers: bearer(token) })).statusCode, 200);
    assert.equal((await app.inject({ url: list('team-a'), headers: bearer(token) })).statusCode, 403);
  });

  it('still refuses a token without a subject', async () => {
    const res = await app.inject({ url: list(NS), headers: bearer(unsigned({ foo: 1, exp: Math.floor(Date.now() / 1000) + 600 })) });
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error, /no "sub" claim/);
  });
});
