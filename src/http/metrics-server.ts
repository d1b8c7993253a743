// /metrics on a listener of its own (SLESS_METRICS_PORT, the controller's). Its series are labelled
// with every tenant's namespaces and function names, so they stay off the public port that serves
// /fn, /hooks, /v1 and /funcs: a Service or NetworkPolicy can then expose the one without the other.
// Plain node:http, one route: nothing on this port parses a body or sees a token.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** http://127.0.0.1:<port> (loopback, whatever host it listens on). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  readonly registry: Registry;
  readonly host: string;
  /** 0: any free port (tests). */
  readonly port: number;
  /** Further GET routes answering JSON: the autoscaler's in-flight counts (platform/kubernetes/scaling/counts-endpoint.ts). */
  readonly json?: Readonly<Record<string, () => unknown>>;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const json = opts.json?.[path];
    if (json && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json()));
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`this port serves only GET /metrics${Object.keys(opts.json ?? {}).map((p) => ` and ${p}`).join('')}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET /metrics\n');
      return;
    }
    opts.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${String(err)}\n`),
    );
  });
  // Scrapes are short; an idle scraper's kept-alive connection must not hold close() up.
  server.keepAliveTimeout = 5_000;
  server.listen({ host: opts.host, port: opts.port });
  await once(server, 'listening'); // rejects with the 'error' (EADDRINUSE) instead
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
