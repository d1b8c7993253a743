import type { AuthOptions } from './token-verifier.ts';

/** The token settings of the controller's configuration (and of `sless token`, which reads the same variables). */
export interface AuthSettings {
  readonly jwtSecret?: string | undefined;
  readonly jwksUrl?: string | undefined;
  readonly jwtPublicKey?: string | undefined;
  readonly jwtIssuer?: string | undefined;
  readonly jwtAudience?: string | undefined;
  readonly jwtAlgorithms?: readonly string[] | undefined;
  readonly adminClaim: string;
  readonly jwtAllowNoExp?: boolean;
}

/** How the controller checks /v1 tokens, from its settings (config.ts has made sure at most one key source is set). */
export function authOptionsOf(config: AuthSettings): AuthOptions {
  const common = { issuer: config.jwtIssuer, audience: config.jwtAudience, adminClaim: config.adminClaim, allowNoExp: config.jwtAllowNoExp ?? false };
  if (config.jwksUrl) return { ...common, key: { kind: 'jwks', url: config.jwksUrl, ...(config.jwtAlgorithms ? { algorithms: config.jwtAlgorithms } : {}) } };
  if (config.jwtPublicKey) return { ...common, key: { kind: 'public-key', pem: config.jwtPublicKey } };
  if (config.jwtSecret) return { ...common, key: { kind: 'hs256', secret: config.jwtSecret } };
  return { ...common, key: { kind: 'insecure' } };
}
