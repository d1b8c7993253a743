// The services the controller's settings name, probed from where `sless check` runs: S3 (put and delete
// a probe object), the registry with the build namespace's push Secret (a v2 auth check), every image the
// settings name (a manifest HEAD), and the way /v1 tokens are verified.
import { randomBytes, createPublicKey } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3ArtifactStore } from '../build/s3-artifact-store.ts';
import { baseImageOf } from '../build/runtime-catalog.ts';
import type { ControllerConfig } from '../config/config.ts';
import { RUNTIMES } from '../manifest/types.ts';
import type { ControllerSettings, ResolvedControllerSettings } from '../platform/kubernetes/settings.ts';
import { fail, messageOf, pass, type CheckResult } from './check-result.ts';
import type { KubeReader } from './kube-reader.ts';
import { dockerConfigCredentials, manifestStatus, parseImageRef, registryBaseUrl, registryHostOf, registryRequest, type Credentials } from './registry-client.ts';

const S3_FIX = 'SLESS_S3_ENDPOINT, SLESS_S3_BUCKET (the bucket must exist), SLESS_S3_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (s3:PutObject, GetObject, DeleteObject, ListBucket on the bucket)';

export async function checkS3(s3: ControllerSettings['s3']): Promise<CheckResult> {
  const store = new S3ArtifactStore({
    bucket: s3.bucket,
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.credentials ? { credentials: s3.credentials } : {}),
    maxAttempts: 1,
  });
  const name = `S3 ${store.location}`;
  const key = `sless-check/probe-${randomBytes(6).toString('hex')}`;
  try {
    await store.init();
    await store.put(key, Readable.from([Buffer.from('sless check\n')]));
    await store.delete(key);
    return pass(name, 'reachable, the probe object was written and deleted');
  } catch (err) {
    return fail(name, messageOf(err), S3_FIX);
  }
}

async function secretDockerConfig(kube: KubeReader, namespace: string, name: string): Promise<string | undefined> {
  const secret = await kube.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
  if (!secret) return undefined;
  const encoded = secret.data?.['.dockerconfigjson'] ?? secret.data?.['config.json'];
  return encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8');
}

export interface RegistryAccess {
  /** Credentials per registry host (the push Secret's for SLESS_REGISTRY, the pull Secret's for the others). */
  readonly credentials: Map<string, Credentials>;
  readonly result: CheckResult;
}

/** SLESS_REGISTRY answers, and the push Secret (SLESS_REGISTRY_SECRET in the build namespace) is accepted by it. */
export async function checkRegistry(kube: KubeReader, settings: ResolvedControllerSettings): Promise<RegistryAccess> {
  const host = registryHostOf(settings.registry);
  const secretName = settings.registrySecretName;
  const where = `${settings.buildNamespace}/${secretName}`;
  const name = `registry ${host}`;
  const credentials = new Map<string, Credentials>();
  const createSecret = `kubectl -n ${settings.buildNamespace} create secret docker-registry ${secretName} --docker-server=${host} --docker-username=USER --docker-password=PASSWORD (or SLESS_REGISTRY_SECRET names another Secret)`;
  try {
    const config = await secretDockerConfig(kube, settings.buildNamespace, secretName);
    const creds = config === undefined ? undefined : dockerConfigCredentials(config, host);
    if (creds) credentials.set(host, creds);
    const pullSecret = settings.build.pullSecretName;
    if (pullSecret) {
      const pull = await secretDockerConfig(kube, settings.buildNamespace, pullSecret);
      for (const image of [settings.kanikoImage, settings.buildToolsImage, settings.runtimeImagePrefix + '/x']) {
        const h = parseImageRef(image).registry;
        const c = pull === undefined ? undefined : dockerConfigCredentials(pull, h);
        if (c && !credentials.has(h)) credentials.set(h, c);
      }
    }
    const repo = parseImageRef(`${settings.registry}/sless-check`).repository;
    const answer = await registryRequest('GET', `${registryBaseUrl(host)}/v2/`, { ...(creds ? { credentials: creds } : {}), scope: `repository:${repo}:push,pull` });
    const url = `${registryBaseUrl(host)}/v2/`;
    if (answer.status === 200 && creds) return { credentials, result: pass(name, `${url} accepts the push Secret ${where} (${answer.auth})`) };
    if (answer.status === 200) {
      const note = config === undefined ? `no push Secret ${where}: the registry takes anonymous requests` : `Secret ${where} holds no credentials for ${host}; the registry takes anonymous requests`;
      return { credentials, result: pass(name, `${url} answers; ${note}`) };
    }
    if (answer.status === 401 || answer.status === 403) {
      if (config === undefined) return { credentials, result: fail(name, `${url} asks for credentials and there is no Secret ${where}`, createSecret) };
      if (!creds) return { credentials, result: fail(name, `Secret ${where} has no credentials for ${host}`, createSecret) };
      return { credentials, result: fail(name, `${url} refuses the credentials of Secret ${where} (${answer.status})`, `renew the password in Secret ${where}: ${createSecret}`) };
    }
    return { credentials, result: fail(name, `${url} answered ${answer.status}, not a registry v2 API`, 'SLESS_REGISTRY: host[:port]/prefix of an OCI registry') };
  } catch (err) {
    return { credentials, result: fail(name, `unreachable: ${messageOf(err)}`, 'SLESS_REGISTRY (host[:port]/prefix), and that the registry runs and is reachable from here and from the cluster') };
  }
}

/** Every image the settings name (and the controller's own) is in its registry. */
export async function checkImages(settings: ResolvedControllerSettings, credentials: ReadonlyMap<string, Credentials>, controllerImage?: string): Promise<CheckResult[]> {
  const push = 'push them with scripts/images.sh --registry <registry>/<prefix> (docs/install.md, Images)';
  const wanted: Array<[string, string, string]> = [
    ['builder image', settings.kanikoImage, `SLESS_KANIKO_IMAGE; ${push}`],
    ['build tools image', settings.buildToolsImage, `SLESS_BUILD_TOOLS_IMAGE (default <SLESS_RUNTIME_IMAGE_PREFIX>/sless-build-tools:<tag>); ${push}`],
    ...RUNTIMES.map((r): [string, string, string] => [`runtime image ${r}`, baseImageOf(r, settings.runtimeImagePrefix), `SLESS_RUNTIME_IMAGE_PREFIX; ${push}`]),
    ...(controllerImage ? [['controller image', controllerImage, `the StatefulSet's image (kustomize images: / chart image.repository); ${push}`] as [string, string, string]] : []),
  ];
  return Promise.all(
    wanted.map(async ([what, image, fix]) => {
      const ref = parseImageRef(image);
      try {
        const creds = credentials.get(ref.registry);
        const answer = await manifestStatus(ref, creds);
        if (answer.status === 200) return pass(what, `${image} is there`);
        if (answer.status === 404) return fail(what, `${image} is not in ${ref.registry}`, fix);
        return fail(what, `${image}: ${ref.registry} answered ${answer.status}${creds ? '' : ' (no credentials for it)'}`, `${fix}; pull credentials: SLESS_BUILD_PULL_SECRET / SLESS_REGISTRY_SECRET`);
      } catch (err) {
        return fail(what, `${image}: ${ref.registry} unreachable: ${messageOf(err)}`, fix);
      }
    }),
  );
}

/** How /v1 tokens are verified: one key source that works (a JWKS answers keys, a PEM parses). */
export async function checkAuth(config: ControllerConfig): Promise<CheckResult> {
  const name = '/v1 auth';
  const fix = 'set one of SLESS_JWT_SECRET (then sless token mints tokens), SLESS_JWKS_URL (+ SLESS_JWT_ISSUER, SLESS_JWT_AUDIENCE) or SLESS_JWT_PUBLIC_KEY';
  if (config.authInsecure) return fail(name, 'SLESS_AUTH_INSECURE=1: unsigned tokens are accepted, anyone may act as any namespace', `unset SLESS_AUTH_INSECURE and ${fix}`);
  if (config.jwtSecret) return pass(name, `HS256 secret (SLESS_JWT_SECRET, ${Buffer.byteLength(config.jwtSecret)} bytes); mint tokens with sless token --subject S`);
  if (config.jwtPublicKey) {
    try {
      const key = createPublicKey(config.jwtPublicKey);
      return pass(name, `public key (SLESS_JWT_PUBLIC_KEY, ${key.asymmetricKeyType ?? '?'})`);
    } catch (err) {
      return fail(name, `SLESS_JWT_PUBLIC_KEY is not a PEM public key: ${messageOf(err)}`, 'SLESS_JWT_PUBLIC_KEY: an SPKI "BEGIN PUBLIC KEY" block');
    }
  }
  if (config.jwksUrl) {
    try {
      const res = await fetch(config.jwksUrl, { signal: AbortSignal.timeout(10_000) });
      const body = (await res.json().catch(() => ({}))) as { keys?: unknown[] };
      if (!res.ok || !Array.isArray(body.keys) || body.keys.length === 0) return fail(name, `SLESS_JWKS_URL ${config.jwksUrl} answered ${res.status} without keys`, 'SLESS_JWKS_URL: your identity provider\'s JWKS (…/.well-known/jwks.json)');
      return pass(name, `JWKS ${config.jwksUrl} (${body.keys.length} keys), issuer ${config.jwtIssuer ?? 'any'}, audience ${config.jwtAudience ?? 'any'}`);
    } catch (err) {
      return fail(name, `SLESS_JWKS_URL ${config.jwksUrl} unreachable: ${messageOf(err)}`, 'SLESS_JWKS_URL: your identity provider\'s JWKS, reachable from the controller');
    }
  }
  return fail(name, 'no way to verify tokens', fix);
}
