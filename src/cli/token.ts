// `sless token --subject S [--admin] [--ttl 30d]`: signs a /v1 token with the HS256 secret the
// controller verifies with (SLESS_JWT_SECRET, the same settings the controller reads), with the
// configured issuer, audience and admin claim. The token goes to stdout alone (so
// `export SLESS_TOKEN=$(sless token --subject team-a)` works); who it is for, the namespace it owns
// and when it expires go to stderr. With a JWKS or a public key there is no secret here to sign with:
// it refuses, saying where such tokens come from.
import { SignJWT } from 'jose';
import { namespaceForSubject } from '../auth/namespace-for-subject.ts';
import { ConfigError } from '../config/config.ts';
import { loadTokenConfig, tokenTtlSeconds, type TokenConfig } from '../config/tool-settings.ts';
import type { CommandIo } from './io.ts';

/** Why this configuration cannot sign a token, or undefined when it can (an HS256 secret). */
export function tokenRefusal(config: Pick<TokenConfig, 'jwtSecret' | 'jwksUrl' | 'jwtPublicKey' | 'jwtIssuer' | 'jwtAudience' | 'adminClaim' | 'authInsecure'>): string | undefined {
  const claims = `"sub", "exp"${config.jwtIssuer ? `, "iss": ${JSON.stringify(config.jwtIssuer)}` : ''}${config.jwtAudience ? `, "aud": ${JSON.stringify(config.jwtAudience)}` : ''}, and "${config.adminClaim}": true for an admin`;
  if (config.jwksUrl) {
    return `the configuration verifies tokens with SLESS_JWKS_URL (${config.jwksUrl}): tokens come from that identity provider, not from sless (claims: ${claims}). sless token signs only with an HS256 secret (SLESS_JWT_SECRET).`;
  }
  if (config.jwtPublicKey) {
    return `the configuration verifies tokens with SLESS_JWT_PUBLIC_KEY: sign them with its private key (claims: ${claims}). sless token signs only with an HS256 secret (SLESS_JWT_SECRET).`;
  }
  if (config.authInsecure) return 'SLESS_AUTH_INSECURE=1 accepts unsigned tokens: there is no secret to sign with. Set SLESS_JWT_SECRET (and unset SLESS_AUTH_INSECURE) to use signed tokens.';
  if (!config.jwtSecret) {
    return 'no SLESS_JWT_SECRET: set it to the controller\'s secret, e.g. export SLESS_JWT_SECRET="$(kubectl -n sless-system get secret sless-controller-secrets -o jsonpath=\'{.data.SLESS_JWT_SECRET}\' | base64 -d)"';
  }
  return undefined;
}

export interface SignedToken {
  readonly token: string;
  readonly namespace: string;
  readonly expiresAt: Date;
}

/** Signs the token `config` asks for; `now` in ms (tests pass their own). */
export async function signToken(config: TokenConfig, now = Date.now()): Promise<SignedToken> {
  const iat = Math.floor(now / 1000);
  const exp = iat + tokenTtlSeconds(config.ttl);
  let jwt = new SignJWT(config.admin ? { [config.adminClaim]: true } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(config.subject)
    .setIssuedAt(iat)
    .setExpirationTime(exp);
  if (config.jwtIssuer) jwt = jwt.setIssuer(config.jwtIssuer);
  if (config.jwtAudience) jwt = jwt.setAudience(config.jwtAudience);
  const token = await jwt.sign(new TextEncoder().encode(config.jwtSecret));
  return { token, namespace: namespaceForSubject(config.subject), expiresAt: new Date(exp * 1000) };
}

export async function run(argv: string[], io: CommandIo, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const config = loadTokenConfig(argv, env);
  const refusal = tokenRefusal(config);
  if (refusal) throw new ConfigError(refusal);
  const signed = await signToken(config);
  io.stdout.write(`${signed.token}\n`);
  io.stderr.write(
    `subject ${JSON.stringify(config.subject)} owns namespace ${signed.namespace} (put its FunctionRepository there)` +
      `${config.admin ? `; admin (${config.adminClaim}: true): every namespace` : ''}; expires ${signed.expiresAt.toISOString()}\n`,
  );
  return 0;
}
