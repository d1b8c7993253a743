// isomorphic-git's HTTP client on undici: keep-alive (ls-remote and fetch share a connection),
// redirects, and timeouts, so an unresponsive server fails the sync instead of hanging it.
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { Agent, interceptors, request } from 'undici';
import type { Dispatcher } from 'undici';

export interface GitHttpOptions {
  readonly connectTimeoutMs?: number;
  /** Time to the response headers and between body chunks. */
  readonly idleTimeoutMs?: number;
}

export function createGitHttp(options: GitHttpOptions = {}): HttpClient & { close(): Promise<void> } {
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    headersTimeout: options.idleTimeoutMs ?? 60_000,
    bodyTimeout: options.idleTimeoutMs ?? 60_000,
  });
  const dispatcher: Dispatcher = agent.compose(interceptors.redirect({ maxRedirections: 5 }));
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const res = await request(req.url, {
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body ? await collect(req.body) : undefined,
        dispatcher,
        signal: req.signal,
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      return {
        url: req.url,
        method: req.method,
        statusCode: res.statusCode,
        statusMessage: '',
        headers,
        body: res.body[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>,
      };
    },
    close: () => agent.close(),
  };
}

// Request bodies are small want/have lists; a Buffer gives the server a Content-Length
// (git http-backend before 2.x and some proxies mishandle chunked uploads).
async function collect(body: AsyncIterableIterator<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of body) parts.push(p);
  return Buffer.concat(parts);
}
