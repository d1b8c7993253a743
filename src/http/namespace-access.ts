// Who may act in a namespace: the one rule of /v1 and the console (/funcs). A token is verified,
// then a path namespace other than the caller's own (`sless-` + sha256(sub)) is refused with 403
// unless the token carries the admin claim, or it is a preview of the caller's own namespace
// (`<own>-pr-<N>`, docs/previews.md) and the request only reads it or calls its functions: the
// `sless/preview` commit status links reviewers there, and a preview is changed from its pull
// request, never through /v1 or the console. The platform's own namespaces (sless-system, the build
// namespace, kube-system, kube-public, kube-node-lease) are refused to every token, admin or not (../platform/tenant-rules.ts).
// One verifier per app, so a JWKS is fetched once for both.
import { AuthError, createTokenVerifier, type AuthOptions, type Caller } from '../auth/token-verifier.ts';
import { reservedNamespaceProblem, type PlatformNamespaces } from '../platform/tenant-rules.ts';
import { parsePreviewNamespace } from '../preview/preview-name.ts';
import { isDnsLabel } from './dns-label.ts';
import { HttpError } from './errors.ts';

/**
 * What a request does in a namespace. `invoke` is a call of a function through /fn on the caller's
 * behalf (the console's Invoke tab): /fn itself takes no token, so it gives nothing the function's
 * URL does not already give, and it changes no object; in a preview it is what a reviewer is there for.
 */
export type NamespaceAction = 'read' | 'invoke' | 'write';

/** The action of a /v1 request by its method: GET and HEAD read, every other method changes something. */
export function actionOfMethod(method: string): NamespaceAction {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

export interface NamespaceAccess {
  /** Verifies the token `getToken` returns (it may throw AuthError: no token); 401 when it does not verify. */
  identify(getToken: () => string): Promise<Caller>;
  /** identify(), then 400 for a namespace that is not a DNS label and 403 where `assertMayAct` refuses `action`. */
  authorize(getToken: () => string, namespace: string, action: NamespaceAction): Promise<Caller>;
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
    async authorize(getToken, namespace, action) {
      const caller = await identify(getToken);
      assertMayAct(caller, namespace, action, opts.platformNamespaces);
      return caller;
    },
  };
}

/**
 * The namespace rule alone (pure), for every /v1 route and console page:
 * - a name that is not a DNS label: 400; one of the platform's namespaces: 403 to every token;
 * - an admin token: every other namespace, any action;
 * - a tenant's token: its own namespace, any action; `<own>-pr-<N>` (a preview of its own namespace,
 *   by name: parsePreviewNamespace) to read and invoke only, 403 to a write saying that previews are
 *   managed from their pull request; any other namespace (another's previews, `<own>-pr-3-pr-4`,
 *   `<own>x-pr-3`, `<own>-pr-03`) 403.
 */
export function assertMayAct(caller: Caller, namespace: string, action: NamespaceAction, platform?: PlatformNamespaces): void {
  const problem = namespaceAccessProblem(caller, namespace, action, platform);
  if (problem) throw problem;
}

/** assertMayAct's answer without throwing: the refusal, or undefined (the console asks it to show a page read-only). */
export function namespaceAccessProblem(caller: Caller, namespace: string, action: NamespaceAction, platform?: PlatformNamespaces): HttpError | undefined {
  if (!isDnsLabel(namespace)) return new HttpError('invalid_name', `"${namespace}" is not a namespace name (a DNS label)`);
  const reserved = reservedNamespaceProblem(namespace, platform);
  if (reserved) return new HttpError('forbidden', `${reserved}: no token${caller.admin ? ', not even an admin token,' : ''} may act there`);
  if (caller.admin || caller.namespace === namespace) return undefined;
  const preview = parsePreviewNamespace(namespace);
  if (preview?.namespace !== caller.namespace) {
    return new HttpError('forbidden', `this token owns namespace ${caller.namespace}, not ${namespace}`);
  }
  if (action !== 'write') return undefined;
  return new HttpError(
    'forbidden',
    `namespace ${namespace} is the preview of pull request #${preview.number} of ${preview.namespace}: this token may read it, ` +
      'but a preview is managed from its pull request (push to its branch, close it); only an admin token changes it here',
  );
}
