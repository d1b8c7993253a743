// isomorphic-git's HTTP client on undici: keep-alive (ls-remote and fetch share a connection), timeouts
// (an unresponsive server fails the sync instead of hanging it), a TargetPolicy checked on the first URL,
// on every address a name resolves to and on every redirect (followed here, up to MAX_REDIRECTS, so each
// hop is checked), and a cap on the bytes one sync may download (isomorphic-git holds a whole pack in
// memory). Credentials never leave the origin they were given for: a redirect to another origin (scheme,
// host or port) is followed without the Authorization header (issue 31 item 4; git's own client does the
// same), so `sless dev` and SLESS_GIT_CROSS_HOST_REDIRECTS=1 hand no token to the host redirected to.
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { TargetPolicy } from './target-policy.ts';

export interface GitHttpOptions {
  readonly connectTimeoutMs?: number;
  /** Time to the response headers and between body chunks. */
  readonly idleTimeoutMs?: number;
  /** Largest response body accepted (a pack, a ref list); default 256 MiB. */
  readonly maxResponseBytes?: number;
}

export const DEFAULT_MAX_FETCH_BYTES = 256 * 1024 * 1024;
const MAX_REDIRECTS = 5;

/** A response body past GitHttpOptions.maxResponseBytes. */
export class FetchTooLargeError extends Error {
  readonly code = 'SLESS_FETCH_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`the server sent more than ${limit} bytes in one response`);
    this.name = 'FetchTooLargeError';
  }
}

export function createGitHttp(policy: TargetPolicy, options: GitHttpOptions = {}): HttpClient & { close(): Promise<void> } {
  const dispatcher = new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 10_000, lookup: policy.lookup },
    headersTimeout: options.idleTimeoutMs ?? 60_000,
    bodyTimeout: options.idleTimeoutMs ?? 60_000,
  });
  const limit = options.maxResponseBytes ?? DEFAULT_MAX_FETCH_BYTES;
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const body = req.body ? await collect(req.body) : undefined;
      let url = new URL(req.url);
      let method = (req.method ?? 'GET') as Dispatcher.HttpMethod;
      let headers = req.headers;
      policy.checkUrl(url);
      for (let hop = 0; ; hop++) {
        const res = await request(url, { method, headers, body: method === 'GET' ? undefined : body, dispatcher, signal: req.signal });
        const location = res.headers.location;
        if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
          await res.body.dump();
          if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects from ${req.url}`);
          const next = new URL(location, url);
          policy.checkRedirect(url, next);
          if (next.origin !== url.origin) headers = withoutCredentials(headers);
          if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) method = 'GET';
          url = next;
          continue;
        }
        const answered: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) answered[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        return {
          url: req.url,
          method: req.method,
          statusCode: res.statusCode,
          statusMessage: '',
          headers: answered,
          body: capped(res.body, limit),
        };
      }
    },
    close: () => dispatcher.close(),
  };
}

/** Request headers without those that carry credentials (for a hop to another origin). Pure. */
export function withoutCredentials(headers: GitHttpRequest['headers']): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
}
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

async function* capped(body: AsyncIterable<Uint8Array>, limit: number): AsyncIterableIterator<Uint8Array> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.byteLength;
    if (seen > limit) throw new FetchTooLargeError(limit);
    yield chunk;
  }
}

// Request bodies are small want/have lists; a Buffer gives the server a Content-Length
// (git http-backend before 2.x and some proxies mishandle chunked uploads).
async function collect(body: AsyncIterableIterator<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of body) parts.push(p);
  return Buffer.concat(parts);
}
