// The console's login session (pure): the caller's own JWT, kept in an HttpOnly, SameSite=Strict
// cookie scoped to /funcs (so functions under /fn, which share the origin, never receive it), and
// the CSRF token derived from it that every cookie-authenticated action must carry. Browsers keep
// cookies per host, not per port, so the cookie's name carries the port the browser used: two
// `sless dev` on one machine (each with its own signing secret) keep two sessions.
import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeJwt } from 'jose';

export const COOKIE_NAME = 'sless_console';
export const COOKIE_PATH = '/funcs';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = '_csrf';

/**
 * The session cookie's name for a request to `port` (from its Host header): `sless_console` on the
 * default ports (no port in the address, as behind an ingress), `sless_console_<port>` on any other.
 */
export function cookieNameFor(port: number | null | undefined): string {
  return port === null || port === undefined || port === 80 || port === 443 ? COOKIE_NAME : `${COOKIE_NAME}_${port}`;
}

/** `query`: a script's `?token=` on a GET (never for an action). */
export type TokenSource = { readonly token: string; readonly via: 'header' | 'cookie' | 'query' };

/** One cookie's value from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** An Authorization header wins (scripts, curl); else the session cookie named `cookieName` (cookieNameFor). */
export function tokenOf(headers: { readonly authorization?: string; readonly cookie?: string }, cookieName = COOKIE_NAME): TokenSource | undefined {
  if (headers.authorization) return { token: headers.authorization, via: 'header' };
  const token = readCookie(headers.cookie, cookieName);
  return token ? { token, via: 'cookie' } : undefined;
}

/**
 * Set-Cookie for a verified token. It lives as long as the token does (a session cookie when the
 * token has no `exp`). Secure unless the request came over plain http to a host that is not this
 * machine: browsers keep Secure cookies for http://localhost, and refuse them on other http hosts.
 */
export function sessionCookie(token: string, opts: { readonly secure: boolean; readonly now?: number; readonly name?: string }): string {
  const parts = [`${opts.name ?? COOKIE_NAME}=${token}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict'];
  if (opts.secure) parts.push('Secure');
  const exp = expiryOf(token);
  if (exp !== undefined) parts.push(`Max-Age=${Math.max(0, exp - Math.floor((opts.now ?? Date.now()) / 1000))}`);
  return parts.join('; ');
}

export function clearedCookie(secure: boolean, name = COOKIE_NAME): string {
  return [`${name}=`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : []), 'Max-Age=0'].join('; ');
}

function expiryOf(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the session cookie is Secure. Behind a TLS-terminating ingress the request reaches sless
 * over plain http, so the scheme browsers see comes from configuration: SLESS_PUBLIC_URL being https
 * (X-Forwarded-Proto is believed only where the app trusts its proxy, and then `protocol` says https).
 */
export function secureCookieFor(protocol: string, hostname: string, publicUrl?: string): boolean {
  if (publicUrl?.toLowerCase().startsWith('https:') === true) return true;
  return protocol === 'https' || ['localhost', '127.0.0.1', '[::1]', '::1'].includes(hostname) || hostname.endsWith('.localhost');
}

/**
 * Why a `?token=` link may not log this browser in, or undefined. A link opened from outside any page
 * (typed, pasted, a terminal: Sec-Fetch-Site none) or from the console itself may; one followed from
 * another site, or from a browser that does not say where it comes from, may not: a page elsewhere
 * could otherwise log a victim into the attacker's namespace (login CSRF).
 */
export function linkLoginProblem(fetchSite: string | undefined): string | undefined {
  if (fetchSite === 'none' || fetchSite === 'same-origin') return undefined;
  return 'a link from another site cannot log you in; paste the token below, or open the link by typing or pasting it into the address bar';
}

/**
 * The CSRF token of a session: a hash of its JWT. Another site can neither read the cookie nor the
 * page that carries this value, so it cannot forge an action; every replica computes the same one.
 */
export function csrfTokenOf(token: string): string {
  return createHash('sha256').update(`sless-console-csrf\n${token}`).digest('base64url');
}

export function csrfMatches(token: string, given: string | undefined): boolean {
  if (!given) return false;
  const want = Buffer.from(csrfTokenOf(token));
  const got = Buffer.from(given);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Why a state-changing request is refused, or undefined when it may go on (pure). A request that
 * authenticates with an Authorization header needs no CSRF token (browsers never add that header by
 * themselves); one with the cookie needs the session's token, and a browser that names another
 * origin (Origin, Sec-Fetch-Site) is refused whatever it carries.
 */
export function csrfProblem(req: {
  readonly source: TokenSource;
  readonly given: string | undefined;
  readonly origin: string | undefined;
  readonly fetchSite: string | undefined;
  /** host[:port] the request was sent to (a TLS-terminating proxy in front may change the scheme). */
  readonly ownHost: string;
}): string | undefined {
  if (req.source.via === 'header') return undefined;
  if (req.source.via === 'query') return 'a token in the address cannot act; send it as "Authorization: Bearer <jwt>"';
  const crossSite = foreignRequest(req);
  if (crossSite) return crossSite;
  if (!csrfMatches(req.source.token, req.given)) {
    return `missing or wrong CSRF token: send the ${CSRF_HEADER} header (or the ${CSRF_FIELD} form field) the console page carries`;
  }
  return undefined;
}

/** A browser's own word that a request comes from another site (Sec-Fetch-Site, Origin), or undefined. */
export function foreignRequest(req: { readonly origin: string | undefined; readonly fetchSite: string | undefined; readonly ownHost: string }): string | undefined {
  if (req.fetchSite && !['same-origin', 'none'].includes(req.fetchSite)) return `a ${req.fetchSite} request cannot act in the console`;
  if (req.origin !== undefined && hostnameOf(req.origin) !== hostnameOf(`http://${req.ownHost}`)) return `a request from ${req.origin} cannot act in the console`;
  return undefined;
}

/** Sites are told apart by host name (ports and schemes do not make another site). */
function hostnameOf(origin: string): string | undefined {
  try {
    return new URL(origin).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
