// A plain undici request made as client-node would make it: applySecurityAuthentication fills a
// RequestContext with the headers (token, basic, exec and auth-provider plugins), the dispatcher (TLS; the
// shared keep-alive pools and request counting of reuse-connections.ts) and, for writes through a gated
// KubeConfig, the write gate's signal (write-gate.ts). One place, so the JSON writes and the JSON watches
// cannot drift apart in how they authenticate.
import { RequestContext, type HttpMethod, type KubeConfig } from '@kubernetes/client-node';

export interface Authenticated {
  url: string;
  headers: Record<string, string>;
  dispatcher?: NonNullable<ReturnType<RequestContext['getDispatcher']>>;
  signal?: AbortSignal;
}

/** The server URL of the current cluster, without a trailing slash. */
export function clusterServer(kc: KubeConfig, what: string): string {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error(`${what}: the kubeconfig has no current cluster`);
  return server.replace(/\/+$/, '');
}

export async function authenticate(kc: KubeConfig, url: string, method: HttpMethod): Promise<Authenticated> {
  const context = new RequestContext(url, method);
  await kc.applySecurityAuthentication(context);
  const dispatcher = context.getDispatcher();
  const signal = context.getSignal();
  return {
    url: context.getUrl(),
    headers: context.getHeaders(),
    ...(dispatcher ? { dispatcher } : {}),
    ...(signal ? { signal } : {}),
  };
}
