// Verifies /v1 bearer tokens with jose and says who the caller is. One of four key sources, chosen
// by configuration: an HS256 secret, a PEM public key (RSA, RSA-PSS or EC), a JWKS URL (cached;
// refetched when a token names an unknown kid, at most once per cooldown), or the explicitly named
// insecure mode that decodes without verifying (the old system's behaviour).
import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeJwt,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import { namespaceForSubject } from './namespace-for-subject.ts';

export type AuthKeySource =
  | { readonly kind: 'hs256'; readonly secret: string }
  | { readonly kind: 'public-key'; readonly pem: string }
  | {
      readonly kind: 'jwks';
      readonly url: string;
      readonly cooldownMs?: number;
      readonly cacheMaxAgeMs?: number;
      /** Accepted signature algorithms; default JWKS_DEFAULT_ALGORITHMS. A key of the set alone never decides. */
      readonly algorithms?: readonly string[];
    }
  | { readonly kind: 'insecure' };

export interface AuthOptions {
  readonly key: AuthKeySource;
  readonly issuer?: string;
  readonly audience?: string;
  /** Claim that grants every namespace when it is `true`; default `sless_admin`. */
  readonly adminClaim?: string;
  /** Allowed clock skew for exp/nbf; default 30 s. */
  readonly clockToleranceSec?: number;
  /** Accept tokens without an `exp` claim (that never expire); default false. */
  readonly allowNoExp?: boolean;
}

/** The shortest HS256 secret accepted (RFC 7518 §3.2: a key of at least the hash size, 256 bits). */
export const MIN_HS256_SECRET_BYTES = 32;

/** Why a token was refused, as a bounded set (a metrics label and a log field). */
export type AuthFailureReason =
  | 'missing'
  | 'malformed'
  | 'expired'
  | 'no_exp'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'bad_signature'
  | 'algorithm'
  | 'unknown_key'
  | 'no_subject'
  | 'other';

export interface Caller {
  readonly subject: string;
  readonly namespace: string;
  readonly admin: boolean;
}

/** Why a token was refused; the message is safe to show to the caller. */
export class AuthError extends Error {
  constructor(
    message: string,
    readonly reason: AuthFailureReason = 'other',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AuthError';
  }
}

export type TokenVerifier = (token: string) => Promise<Caller>;

const ASYMMETRIC_ALGS: Record<string, string[]> = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  ec: ['ES256', 'ES384', 'ES512'],
  ed25519: ['EdDSA', 'Ed25519'],
};

/** What a JWKS-verified token may be signed with unless SLESS_JWT_ALGORITHMS says otherwise. */
export const JWKS_DEFAULT_ALGORITHMS = ['RS256', 'ES256'] as const;

/** Every algorithm SLESS_JWT_ALGORITHMS may name (asymmetric only: a JWKS holds public keys). */
export const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export function createTokenVerifier(options: AuthOptions): TokenVerifier {
  const adminClaim = options.adminClaim ?? 'sless_admin';
  if (options.key.kind === 'hs256' && Buffer.byteLength(options.key.secret) < MIN_HS256_SECRET_BYTES) {
    throw new Error(`the HS256 secret is ${Buffer.byteLength(options.key.secret)} bytes; use at least ${MIN_HS256_SECRET_BYTES} random bytes`);
  }
  const common: JWTVerifyOptions = {
    clockTolerance: options.clockToleranceSec ?? 30,
    ...(options.allowNoExp ? {} : { requiredClaims: ['exp'] }),
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  };
  const verify = makeVerify(options.key, common);
  return async (token) => {
    const payload = await verify(token).catch((err: unknown) => {
      throw new AuthError(describe(err), reasonOf(err), { cause: err });
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw new AuthError('the token has no "sub" claim; the subject decides the namespace', 'no_subject');
    }
    return { subject: payload.sub, namespace: namespaceForSubject(payload.sub), admin: payload[adminClaim] === true };
  };
}

function makeVerify(key: AuthKeySource, common: JWTVerifyOptions): (token: string) => Promise<JWTPayload> {
  switch (key.kind) {
    case 'hs256': {
      const secret = new TextEncoder().encode(key.secret);
      return async (token) => (await jwtVerify(token, secret, { ...common, algorithms: ['HS256'] })).payload;
    }
    case 'public-key': {
      let publicKey: KeyObject;
      try {
        publicKey = createPublicKey(key.pem);
      } catch (err) {
        throw new Error('the JWT public key (SLESS_JWT_PUBLIC_KEY) is not a PEM public key; give an SPKI "BEGIN PUBLIC KEY" block', {
          cause: err,
        });
      }
      const algorithms = ASYMMETRIC_ALGS[publicKey.asymmetricKeyType ?? ''];
      if (!algorithms) {
        throw new Error(`the JWT public key has type ${String(publicKey.asymmetricKeyType)}; use an RSA, EC or Ed25519 key`);
      }
      return async (token) => (await jwtVerify(token, publicKey, { ...common, algorithms })).payload;
    }
    case 'jwks': {
      const jwks = createRemoteJWKSet(new URL(key.url), {
        cooldownDuration: key.cooldownMs ?? 30_000,
        cacheMaxAge: key.cacheMaxAgeMs ?? 600_000,
      });
      // Pinned: whoever controls a key in the set must not pick the algorithm too.
      const algorithms = [...(key.algorithms ?? JWKS_DEFAULT_ALGORITHMS)];
      return async (token) => (await jwtVerify(token, jwks, { ...common, algorithms })).payload;
    }
    case 'insecure':
      return (token) => Promise.resolve(decodeInsecure(token, common));
  }
}

/** Insecure mode: no signature check, but a token must still be a JWT and not expired. */
function decodeInsecure(token: string, common: JWTVerifyOptions): JWTPayload {
  const payload = decodeJwt(token);
  const now = Math.floor(Date.now() / 1000);
  const skew = Number(common.clockTolerance ?? 0);
  if (typeof payload.exp === 'number' && payload.exp + skew <= now) {
    throw new joseErrors.JWTExpired('"exp" claim timestamp check failed', payload);
  }
  if (common.requiredClaims?.includes('exp') && typeof payload.exp !== 'number') {
    throw new joseErrors.JWTClaimValidationFailed('missing required "exp" claim', payload, 'exp', 'missing');
  }
  return payload;
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired ("exp" is in the past); get a new one';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'exp' && err.reason === 'missing') {
      return 'the token has no "exp" claim; tokens must expire (SLESS_JWT_ALLOW_NO_EXP=1 accepts them anyway)';
    }
    if (err.claim === 'nbf') return 'the token is not valid yet ("nbf" is in the future)';
    if (err.claim === 'iss') return 'the token was issued by another issuer than this server accepts ("iss")';
    if (err.claim === 'aud') return 'the token is meant for another audience than this server ("aud")';
    return `the token's "${err.claim}" claim is not acceptable: ${err.reason}`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the configured JWKS matches the token (kid/alg)';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm this server does not accept';
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JOSEError) {
    if (err.code === 'ERR_JWKS_TIMEOUT') return 'the JWKS endpoint did not answer in time; try again';
    return `the token is not acceptable: ${err.message}`;
  }
  if (err instanceof TypeError || err instanceof SyntaxError) return 'the token is not a well-formed JWT';
  return 'the token could not be verified';
}

function reasonOf(err: unknown): AuthFailureReason {
  if (err instanceof joseErrors.JWTExpired) return 'expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'exp') return err.reason === 'missing' ? 'no_exp' : 'expired';
    if (err.claim === 'nbf') return 'not_yet_valid';
    if (err.claim === 'iss') return 'wrong_issuer';
    if (err.claim === 'aud') return 'wrong_audience';
    return 'other';
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'unknown_key';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm';
  if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid || err instanceof TypeError || err instanceof SyntaxError) {
    return 'malformed';
  }
  return 'other';
}

/** Takes the token out of an Authorization header, or says why it cannot. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new AuthError('missing Authorization header; send "Authorization: Bearer <JWT>"', 'missing');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) throw new AuthError('the Authorization header is not "Bearer <JWT>"', 'malformed');
  return m[1];
}
