// The app factory: one fastify instance with the whole HTTP surface (docs/contract.md §3), built from
// explicit dependencies and never listening by itself, so tests use app.inject() or listen on port 0.
// It reads no environment variables: src/config parses them once and passes the values in.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { Agent, type Dispatcher } from 'undici';
import type { AuthOptions } from '../auth/token-verifier.ts';
import { consolePlugin } from '../console/index.ts';
import { createMetrics } from '../metrics/metrics.ts';
import type { Platform } from '../platform/types.ts';
import type { BuildLog, InvocationLog, StoreHealth } from '../store/types.ts';
import { apiPlugin } from '../http/api-plugin.ts';
import { errorHandler, notFoundHandler } from '../http/errors.ts';
import { healthPlugin } from '../http/health-plugin.ts';
import { hooksPlugin } from '../http/hooks-plugin.ts';
import { hooksKey, limitFirst, limitRequests, tokenKey, v1Key, type RateLimits } from '../http/rate-limits.ts';
import { createNamespaceAccess } from '../http/namespace-access.ts';
import type { PlatformNamespaces } from '../platform/tenant-rules.ts';
import { SCALE_LIMITS } from '../manifest/scale-spec.ts';
import { Activator } from '../http/activator.ts';
import { proxyPlugin } from '../http/proxy-plugin.ts';
import { awaitingContinue, isProxyPath, proxyRequest, type ProxyContext } from '../http/proxy-request.ts';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../http/read-zip.ts';
import { DEFAULT_UPLOAD_CAPS, type UploadCaps } from '../http/upload-gate.ts';

export interface AppLimits {
  /** Largest body /fn forwards (streamed, so a policy, not a memory bound). Default 6 MiB like config. */
  readonly proxyBodyBytes: number;
  /** Largest JSON body on /v1. Default 1 MiB. */
  readonly jsonBodyBytes: number;
  /** Largest webhook delivery. Default 1 MiB (GitHub caps payloads at 25 MB, but pushes are small). */
  readonly webhookBodyBytes: number;
  readonly zip: ZipLimits;
  readonly uploads: UploadCaps;
  /** The cap on a function's scale.max (SLESS_MAX_REPLICAS): /v1 answers 400 above it. */
  readonly maxReplicas: number;
  /** How long /fn holds a request while a function at zero wakes (SLESS_COLD_START_TIMEOUT). */
  readonly coldStartTimeoutMs: number;
}

export const DEFAULT_LIMITS: AppLimits = {
  proxyBodyBytes: 6 * 1024 * 1024,
  jsonBodyBytes: 1024 * 1024,
  webhookBodyBytes: 1024 * 1024,
  zip: DEFAULT_ZIP_LIMITS,
  uploads: DEFAULT_UPLOAD_CAPS,
  maxReplicas: SCALE_LIMITS.defaultCap,
  coldStartTimeoutMs: 60_000,
};

export interface AppDeps {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  readonly auth: AuthOptions;
  /** Where /metrics reads from and the app's metrics are registered. */
  readonly registry: Registry;
  /** Checked by /readyz, e.g. the Postgres store; absent when logs live in memory. */
  readonly storeHealth?: StoreHealth;
  readonly limits?: Partial<AppLimits>;
  /** pino options; false for none. Default: info level to stdout. */
  readonly logger?: { readonly level?: string; readonly stream?: { write(msg: string): void } } | false;
  /**
   * Serve /metrics on this app's listener (default true: `sless dev`, a single user on loopback). The
   * controller serves it on SLESS_METRICS_PORT instead (metrics-server.ts): its labels name every tenant's functions.
   */
  readonly serveMetrics?: boolean;
  /** Trust X-Forwarded-* from a front proxy (for request.ip / protocol). Default false. */
  readonly trustProxy?: boolean;
  /** Upstream connection pool for /fn; default a keep-alive Agent the app closes on close(). */
  readonly dispatcher?: Dispatcher;
  /** Requests per minute on /v1 (per token subject) and /hooks (per repository); none when absent (`sless dev`). */
  readonly rateLimits?: RateLimits;
  /** Namespaces no token may act in besides kube-system, kube-public, kube-node-lease (the controller's and the builds'); none for `sless dev`. */
  readonly platformNamespaces?: PlatformNamespaces;
  /**
   * The web console at /funcs: functions it hides (SLESS_CONSOLE_EXCLUDE), and the public URL
   * (SLESS_PUBLIC_URL): when https, its cookie is Secure even though a TLS-terminating ingress
   * forwards plain http.
   */
  readonly console?: { readonly exclude?: readonly string[]; readonly publicUrl?: string };
}

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-gitlab-token"]',
  'req.headers["x-hub-signature"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-gitea-signature"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.webhookSecret',
  '*.webhook_secret',
];

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits: AppLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  // /fn requests go straight to the proxy, in front of fastify's router: see proxy-plugin.ts.
  const fast: { proxy?: (req: IncomingMessage, res: ServerResponse) => void } = {};
  const app = fastify({
    serverFactory: (handler, options) => {
      const route = (req: IncomingMessage, res: ServerResponse) => {
        if (fast.proxy && isProxyPath(req.url)) fast.proxy(req, res);
        else handler(req, res);
      };
      // Expect: 100-continue: /fn answers it after its own checks (proxy-request.ts), the rest at once.
      return createServer(options, route).on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (fast.proxy && isProxyPath(req.url)) awaitingContinue.add(req);
        else res.writeContinue();
        route(req, res);
      });
    },
    logger:
      deps.logger === false
        ? false
        : {
            level: deps.logger?.level ?? 'info',
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            // The console's one-time `?token=<jwt>` link must not reach the log with the URL.
            serializers: {
              req: (req: { method: string; url: string; host?: string; ip?: string }) => ({
                method: req.method,
                url: redactTokenQuery(req.url),
                host: req.host,
                remoteAddress: req.ip,
              }),
            },
            ...(deps.logger?.stream ? { stream: deps.logger.stream } : {}),
          },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: limits.jsonBodyBytes,
    trustProxy: deps.trustProxy ?? false,
    // Inputs are strict: unknown fields are errors (not silently removed) and types are not coerced.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false, allowUnionTypes: true } },
    return503OnClosing: true,
  });

  const metrics = createMetrics(deps.registry);
  const ownDispatcher = deps.dispatcher ? undefined : new Agent({ keepAliveTimeout: 30_000, connections: null, connect: { timeout: 5_000 } });
  const dispatcher = deps.dispatcher ?? (ownDispatcher as Dispatcher);
  if (ownDispatcher) app.addHook('onClose', async () => ownDispatcher.close());

  // The id in every log line of a request, handed back so a caller can quote it.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  if (deps.auth.key.kind === 'insecure') {
    app.log.warn('AUTH IS INSECURE: /v1 accepts unsigned and unverified JWTs (SLESS_AUTH_INSECURE=1); never expose this server');
  }

  await app.register(healthPlugin, { platform: deps.platform, registry: deps.registry, store: deps.storeHealth, metrics: deps.serveMetrics ?? true });
  const proxyContext: ProxyContext = {
    platform: deps.platform,
    invocationLog: deps.invocationLog,
    metrics,
    dispatcher,
    maxBodyBytes: limits.proxyBodyBytes,
    trustProxy: deps.trustProxy ?? false,
    log: app.log.child({ plugin: 'proxy' }, { level: 'warn' }),
    ...(deps.platform.scaling
      ? { activator: new Activator({ platform: deps.platform, scaling: deps.platform.scaling, coldStartTimeoutMs: limits.coldStartTimeoutMs }) }
      : {}),
  };
  await app.register(proxyPlugin, proxyContext);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  fast.proxy = (req, res) => {
    if (closing) {
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      res.end(JSON.stringify({ error: 'the server is shutting down; retry', code: 'unavailable' }));
      return;
    }
    void proxyRequest(req, res, proxyContext);
  };
  // Each rate limiter (rate-limits.ts) in a scope of its own, so it counts only its plugin's routes.
  const rates = deps.rateLimits;
  await app.register(async (scope) => {
    if (rates) await limitRequests(scope, { max: rates.hooksPerMinute, key: hooksKey, what: 'webhook deliveries', hook: 'onRequest' });
    await scope.register(hooksPlugin, { platform: deps.platform, metrics, maxBodyBytes: limits.webhookBodyBytes });
  });
  // One token verifier for /v1 and the console: the same rule, and a JWKS fetched once.
  // A refused token is logged with its reason (never the token) and counted in /metrics.
  const authLog = app.log.child({ plugin: 'auth' });
  const access = createNamespaceAccess(deps.auth, {
    ...(deps.platformNamespaces ? { platformNamespaces: deps.platformNamespaces } : {}),
    onRefused: (err) => {
      metrics.authFailures.inc({ reason: err.reason });
      authLog.warn({ reason: err.reason }, `token refused: ${err.message}`);
    },
  });
  await app.register(async (outer) => {
    // First each token as sent, before the api plugin's onRequest hook verifies it: a flood repeating one
    // token (valid or forged) costs no signature check past the limit.
    if (rates) await limitFirst(outer, { max: rates.v1PerMinute, key: tokenKey, what: '/v1 requests', whom: () => 'this token' });
    await outer.register(async (scope) => {
      // preHandler: after the api plugin's onRequest hook has verified the token, so the key is its subject.
      if (rates) await limitRequests(scope, { max: rates.v1PerMinute, key: v1Key, what: '/v1 requests', hook: 'preHandler' });
      await scope.register(apiPlugin, {
        prefix: '/v1',
        platform: deps.platform,
        invocationLog: deps.invocationLog,
        buildLog: deps.buildLog,
        access,
        zipLimits: limits.zip,
        uploadCaps: limits.uploads,
        maxReplicas: limits.maxReplicas,
      });
    });
  });
  await app.register(consolePlugin, {
    prefix: '/funcs',
    platform: deps.platform,
    invocationLog: deps.invocationLog,
    buildLog: deps.buildLog,
    access,
    exclude: deps.console?.exclude ?? [],
    ...(deps.console?.publicUrl ? { publicUrl: deps.console.publicUrl } : {}),
  });
  return app;
}

/** `token=<anything>` in a query string becomes `token=[redacted]`. */
export function redactTokenQuery(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}
