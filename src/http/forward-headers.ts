// Which headers cross the proxy. Hop-by-hop headers belong to one connection and are dropped both
// ways, together with every header the Connection header names (RFC 9110 §7.6.1: Connection,
// Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade; §11.7: Proxy-Authenticate and
// Proxy-Authorization are for this hop's proxy; RFC 9113 §3.2.1 HTTP2-Settings). Trailer goes too:
// trailers are not forwarded. On requests also: Host (the upstream's own; the caller's travels as
// X-Forwarded-Host), Expect (RFC 9110 §10.1.1: this proxy answers 100-continue itself, once the
// function and the size are known) and, with Transfer-Encoding, Content-Length (RFC 9112 §6.3).
import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'http2-settings',
]);

// Built once: endToEndHeaders runs twice per proxied call.
const REQUEST_ONLY: ReadonlySet<string> = new Set(['host', 'expect']);
const REQUEST_ONLY_CHUNKED: ReadonlySet<string> = new Set(['host', 'expect', 'content-length']);
const NONE: ReadonlySet<string> = new Set();

export type HeaderMap = Record<string, string | string[] | undefined>;

/** A copy of `headers` without hop-by-hop headers (and without `drop`, lower-case names). */
export function endToEndHeaders(headers: HeaderMap | IncomingHttpHeaders, drop: ReadonlySet<string> = NONE): Record<string, string | string[]> {
  // Runs twice per proxied call, so it avoids allocating when Connection names nothing extra.
  let named: Set<string> | undefined;
  const connection = headers['connection'];
  for (const value of Array.isArray(connection) ? connection : connection ? [connection] : []) {
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name && name !== 'close' && name !== 'keep-alive') (named ??= new Set()).add(name);
    }
  }
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || drop.has(lower) || named?.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}

/** Request headers for the upstream: end-to-end ones plus X-Forwarded-For/Proto/Host/Prefix. */
export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  forwarded: { clientIp: string | undefined; proto: string; prefix: string },
): Record<string, string | string[]> {
  // Host is the upstream's (undici sets it from the URL); the caller's goes to X-Forwarded-Host.
  const out = endToEndHeaders(headers, headers['transfer-encoding'] === undefined ? REQUEST_ONLY : REQUEST_ONLY_CHUNKED);
  const prior = headers['x-forwarded-for'];
  const priorFor = Array.isArray(prior) ? prior.join(', ') : prior;
  if (forwarded.clientIp) out['x-forwarded-for'] = priorFor ? `${priorFor}, ${forwarded.clientIp}` : forwarded.clientIp;
  out['x-forwarded-proto'] = forwarded.proto;
  if (headers.host) out['x-forwarded-host'] = headers.host;
  out['x-forwarded-prefix'] = forwarded.prefix;
  return out;
}
