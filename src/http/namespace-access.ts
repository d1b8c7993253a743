// Who may act in a namespace: the one rule of /v1 and the console (/funcs). A token is verified,
// then a path namespace other than the caller's own (`sless-` + sha256(sub)) is refused with 403
// unless the token carries the admin claim. The platform's own namespaces (sless-system, the build
// namespace, kube-system, kube-public, kube-node-lease) are refused to every token, admin or not (../platform/tenant-rules.ts).
// One verifier per app, so a JWKS is fetched once for both.
import { AuthError, createTokenVerifier, type AuthOptions, type Caller } from '../auth/token-verifier.ts';
import { reservedNamespaceProblem, type PlatformNamespaces } from '../platform/tenant-rules.ts';
import { isDnsLabel } from './dns-label.ts';
import { HttpError } from './errors.ts';

export interface NamespaceAccess {
  /** Verifies the token `getToken` returns (it may throw AuthError: no token); 401 when it does not verify. */
  identify(getToken: () => string): Promise<Caller>;
  /** identify(), then 400 for a namespace that is not a DNS label and 403 for another's or the platform's namespace. */
  authorize(getToken: () => string, namespace: string): Promise<Caller>;
}

export interface NamespaceAccessOptions {
  readonly onRefused?: (err: AuthError) => void;
  /** The controller's and the builds' namespaces (kube-system, kube-public, kube-node-lease are always refused); none for `sless dev`. */
  readonly platformNamespaces?: PlatformNamespaces;
}

export function createNamespaceAccess(auth: AuthOptions, opts: NamespaceAccessOptions = {}): NamespaceAccess {
  const verify = createTokenVerifier(auth);
  const identify = async (getToken: () => string): Promise<Caller> => {
    try {
      return await verify(getToken());
    } catch (err) {
      if (err instanceof AuthError) {
        opts.onRefused?.(err);
        throw new HttpError('unauthorized', err.message, { cause: err });
      }
      throw err;
    }
  };
  return {
    identify,
    async authorize(getToken, namespace) {
      const caller = await identify(getToken);
      assertMayAct(caller, namespace, opts.platformNamespaces);
      return caller;
    },
  };
}

/** The namespace rule alone (pure). */
export function assertMayAct(caller: Caller, namespace: string, platform?: PlatformNamespaces): void {
  if (!isDnsLabel(namespace)) throw new HttpError('invalid_name', `"${namespace}" is not a namespace name (a DNS label)`);
  const reserved = reservedNamespaceProblem(namespace, platform);
  if (reserved) throw new HttpError('forbidden', `${reserved}: no token${caller.admin ? ', not even an admin token,' : ''} may act there`);
  if (caller.namespace !== namespace && !caller.admin) {
    throw new HttpError('forbidden', `this token owns namespace ${caller.namespace}, not ${namespace}`);
  }
}
