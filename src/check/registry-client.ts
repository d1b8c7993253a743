// Just enough of the registry v2 protocol for `sless check`: the ping with its auth challenge (Basic, or a
// Bearer token from the realm), and a manifest HEAD. Image names are read the way docker and
// go-containerregistry read them: no registry host before the first `/` means Docker Hub.

export interface ImageRef {
  /** host[:port] as written (Docker Hub: `docker.io`). */
  readonly registry: string;
  readonly repository: string;
  /** Tag or `sha256:...` digest. */
  readonly reference: string;
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** `host:5000/a/b:tag`, `a/b@sha256:...`, `busybox` -> its parts (tag `latest` when none is given). */
export function parseImageRef(ref: string): ImageRef {
  const [named = '', digest] = ref.split('@');
  const slash = named.indexOf('/');
  const first = slash < 0 ? '' : named.slice(0, slash);
  const hasHost = first.includes('.') || first.includes(':') || first === 'localhost';
  const registry = hasHost ? first : 'docker.io';
  let rest = hasHost ? named.slice(slash + 1) : named;
  let reference = digest ?? 'latest';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    if (!digest) reference = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const repository = registry === 'docker.io' && !rest.includes('/') ? `library/${rest}` : rest;
  return { registry, repository, reference };
}

/** `registry.example.com/sless` -> `registry.example.com` (the host of a SLESS_REGISTRY-style prefix). */
export function registryHostOf(prefix: string): string {
  return parseImageRef(`${prefix}/x`).registry;
}

/**
 * http for loopback, localhost and private (RFC 1918) addresses, https otherwise: what
 * go-containerregistry (sless-build-tools) and kaniko pick without an insecure flag.
 */
export function registryBaseUrl(registry: string): string {
  if (registry === 'docker.io') return 'https://registry-1.docker.io';
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const plain = host === 'localhost' || host === '::1' || /^127\./.test(host) || /^10\./.test(host) || /^192\.168\./.test(host) || /^172\.(1[6-9]|2\d|3[01])\./.test(host);
  return `${plain ? 'http' : 'https'}://${registry}`;
}

/** The credentials a docker config.json (a `.dockerconfigjson` Secret) holds for `registry`. */
export function dockerConfigCredentials(configJson: string, registry: string): Credentials | undefined {
  let auths: Record<string, { auth?: string; username?: string; password?: string }>;
  try {
    auths = (JSON.parse(configJson) as { auths?: typeof auths }).auths ?? {};
  } catch {
    return undefined;
  }
  const keys = registry === 'docker.io' ? ['docker.io', 'index.docker.io', 'https://index.docker.io/v1/', 'registry-1.docker.io'] : [registry, `https://${registry}`, `http://${registry}`];
  for (const key of keys) {
    const entry = auths[key] ?? auths[`${key}/`];
    if (!entry) continue;
    if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
  }
  return undefined;
}

const basic = (c: Credentials): string => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;

/** `Bearer realm="...",service="..."` -> its parameters. */
function challengeOf(header: string | null): { scheme: string; params: Record<string, string> } | undefined {
  if (!header) return undefined;
  const m = /^(\w+)\s*(.*)$/.exec(header.trim());
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) params[p[1] ?? ''] = p[2] ?? '';
  return { scheme: (m[1] ?? '').toLowerCase(), params };
}

export interface RegistryAnswer {
  readonly status: number;
  /** How the request was authorized in the end. */
  readonly auth: 'anonymous' | 'basic' | 'bearer';
}

/**
 * `method url` on the registry, answering its challenge: Basic with `credentials`, or a Bearer token for
 * `scope` from the challenge's realm (with `credentials` when given, else anonymous). The token
 * endpoint's refusal (401) comes back as the answer's status.
 */
export async function registryRequest(method: 'GET' | 'HEAD', url: string, options: { credentials?: Credentials; scope?: string; accept?: string; timeoutMs?: number } = {}): Promise<RegistryAnswer> {
  const timeout = () => AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const headers: Record<string, string> = options.accept ? { accept: options.accept } : {};
  const first = await fetch(url, { method, headers, signal: timeout() });
  await first.arrayBuffer();
  if (first.status !== 401) return { status: first.status, auth: 'anonymous' };
  const challenge = challengeOf(first.headers.get('www-authenticate'));
  if (challenge?.scheme === 'basic') {
    if (!options.credentials) return { status: 401, auth: 'anonymous' };
    const again = await fetch(url, { method, headers: { ...headers, authorization: basic(options.credentials) }, signal: timeout() });
    await again.arrayBuffer();
    return { status: again.status, auth: 'basic' };
  }
  if (challenge?.scheme === 'bearer' && challenge.params.realm) {
    const tokenUrl = new URL(challenge.params.realm);
    if (challenge.params.service) tokenUrl.searchParams.set('service', challenge.params.service);
    if (options.scope) tokenUrl.searchParams.set('scope', options.scope);
    const tokenRes = await fetch(tokenUrl, { headers: options.credentials ? { authorization: basic(options.credentials) } : {}, signal: timeout() });
    if (!tokenRes.ok) {
      await tokenRes.arrayBuffer();
      return { status: tokenRes.status === 403 ? 403 : 401, auth: 'bearer' };
    }
    const body = (await tokenRes.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) return { status: 401, auth: 'bearer' };
    const again = await fetch(url, { method, headers: { ...headers, authorization: `Bearer ${token}` }, signal: timeout() });
    await again.arrayBuffer();
    return { status: again.status, auth: 'bearer' };
  }
  return { status: 401, auth: 'anonymous' };
}

/** Every manifest media type an image may be stored as (an index for multi-platform images). */
const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** HEAD of the image's manifest: 200 when the registry has it, 404 when not, 401/403 when refused. */
export function manifestStatus(image: ImageRef, credentials?: Credentials): Promise<RegistryAnswer> {
  return registryRequest('HEAD', `${registryBaseUrl(image.registry)}/v2/${image.repository}/manifests/${image.reference}`, {
    accept: MANIFEST_TYPES,
    scope: `repository:${image.repository}:pull`,
    ...(credentials ? { credentials } : {}),
  });
}
