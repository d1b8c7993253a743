// A counting proxy in front of the test API server: clients get a kubeconfig whose server is this plain
// HTTP listener on loopback, every request they make is recorded (method, path, time) and forwarded to
// the real API server over TLS with the same Authorization header. `block()` plays a network partition
// for this one client: open requests (watches too) are cut and new ones are held unanswered until
// `unblock()`; `block(filter)` holds only the requests it matches (e.g. one client's Lease renewals).
// `delay(ms, filter)` forwards matching requests only after ms (a slow API server); one the client gives
// up on meanwhile is never forwarded.
//
//   const proxy = await startCountingProxy(testKubeConfig());
//   const kc = proxy.kubeConfig();            // give this to the code under test
//   const before = proxy.requests.length;
//   ... ; assert.equal(proxy.since(before).length, 0);
//   await proxy.close();
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly at: number;
  /** A watch (`watch=true`/`watch=1`): one long-lived request, not a request per event. */
  readonly watch: boolean;
  /** POST, PUT, PATCH, DELETE. */
  readonly write: boolean;
  /** Held while blocked: never reached the API server. */
  readonly held: boolean;
  /** When it was sent on to the API server; undefined while held or delayed, and for good when the client gave up first. */
  forwardedAt?: number;
}

export type RequestFilter = (r: { method: string; url: string }) => boolean;

export interface CountingProxy {
  readonly url: string;
  readonly requests: readonly ProxiedRequest[];
  /** Requests recorded after the first `index` (from `requests.length` taken earlier). */
  since(index: number): ProxiedRequest[];
  kubeConfig(): KubeConfig;
  block(filter?: RequestFilter): void;
  unblock(): void;
  delay(ms: number, filter?: RequestFilter): void;
  close(): Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function startCountingProxy(upstream: KubeConfig): Promise<CountingProxy> {
  const cluster = upstream.getCurrentCluster();
  const user = upstream.getCurrentUser();
  if (!cluster || !user?.token) throw new Error('counting proxy: the upstream kubeconfig needs a current cluster and a token user');
  const target = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  const agent = new https.Agent({ keepAlive: true, ...(ca ? { ca } : { rejectUnauthorized: false }) });
  const requests: ProxiedRequest[] = [];
  const open = new Set<http.ServerResponse>();
  let blocked: RequestFilter | undefined;
  let delayed: { ms: number; filter: RequestFilter } | undefined;

  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const held = blocked?.({ method, url }) ?? false;
    const record: ProxiedRequest = { method, url, at: Date.now(), watch: /[?&]watch=(true|1)/.test(url), write: WRITES.has(method), held };
    requests.push(record);
    open.add(res);
    let closed = false;
    res.on('close', () => {
      closed = true;
      open.delete(res);
    });
    if (held) return; // the client sees a partition (cut at unblock)
    const forward = () => {
      if (closed) return;
      record.forwardedAt = Date.now();
      const up = https.request(
        { host: target.hostname, port: target.port || 443, path: url, method, headers: { ...req.headers, host: target.host }, agent },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    };
    if (delayed?.filter({ method, url })) {
      req.pause();
      setTimeout(forward, delayed.ms);
    } else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    since: (index) => requests.slice(index),
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'proxied', server: url, skipTLSVerify: true }],
        users: [{ name: 'proxied', token: user.token }],
        contexts: [{ name: 'proxied', cluster: 'proxied', user: 'proxied' }],
        currentContext: 'proxied',
      });
      return kc;
    },
    block(filter = () => true) {
      blocked = filter;
      for (const res of open) if (filter({ method: res.req.method ?? 'GET', url: res.req.url ?? '/' })) res.destroy();
    },
    unblock() {
      const was = blocked;
      blocked = undefined;
      for (const res of open) if (was?.({ method: res.req.method ?? 'GET', url: res.req.url ?? '/' })) res.destroy();
    },
    delay(ms, filter = () => true) {
      delayed = ms > 0 ? { ms, filter } : undefined;
    },
    async close() {
      for (const res of open) res.destroy();
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
