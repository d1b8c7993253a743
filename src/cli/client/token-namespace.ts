// The namespace a token owns, derived as the server derives it (src/auth): the JWT's `sub` through
// namespaceForSubject. The payload is only decoded, not verified: the server verifies; the client
// only needs to know where to look.
import { namespaceForSubject } from '../../auth/namespace-for-subject.ts';
import { CliError } from './errors.ts';

export function tokenSubject(token: string): string {
  const parts = token.split('.');
  if (parts.length !== 3)
    throw new CliError(
      'the API token is not a JWT (three dot-separated parts); give the token sless was configured to trust, or name the namespace with -n',
    );
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
  } catch {
    throw new CliError(
      "the API token's payload is not base64url JSON; check the token, or name the namespace with -n",
    );
  }
  const sub = (payload as { sub?: unknown } | null)?.sub;
  if (typeof sub !== 'string' || sub === '') {
    throw new CliError(
      'the API token has no "sub" claim, so it owns no namespace; name one with -n/--namespace or SLESS_NAMESPACE',
    );
  }
  return sub;
}

export function tokenNamespace(token: string): string {
  return namespaceForSubject(tokenSubject(token));
}
