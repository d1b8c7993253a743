// @kubernetes/client-node 2.x builds a new undici Agent for every API call (KubeConfig.createDispatcher runs
// in applySecurityAuthentication, uncached), so no connection is ever reused: every request pays a TCP
// connect (and a TLS handshake against a real API server) and leaves an idle socket behind. This keeps one
// dispatcher per cluster, user and TLS options on the KubeConfig instance, so requests share keep-alive
// connections the way client-go's transport does.
import type { KubeConfig } from '@kubernetes/client-node';

type CreateDispatcher = (cluster: unknown, agentOptions: Record<string, unknown>) => unknown;
const PATCHED = Symbol.for('sless.reuseConnections');

/** Makes `kc` reuse one dispatcher per (cluster, user, TLS options); idempotent. Returns kc. */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as { createDispatcher?: CreateDispatcher; [PATCHED]?: true };
  if (target[PATCHED] || typeof target.createDispatcher !== 'function') return kc;
  const original = target.createDispatcher.bind(kc);
  const cache = new Map<string, unknown>();
  target.createDispatcher = (cluster, agentOptions) => {
    const c = cluster as { name?: string; server?: string } | null;
    const key = JSON.stringify([c?.name, c?.server, kc.getCurrentUser()?.name, fingerprint(agentOptions)]);
    if (!cache.has(key)) cache.set(key, original(cluster, agentOptions));
    return cache.get(key);
  };
  target[PATCHED] = true;
  return kc;
}

/** The TLS options by value (Buffers by length and a sample, enough to tell a rotated certificate). */
function fingerprint(options: Record<string, unknown>): string {
  return JSON.stringify(options, (_k, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      const data = (v as { data: number[] }).data;
      return `buffer:${data.length}:${data.slice(-64).join(',')}`;
    }
    return v;
  });
}
