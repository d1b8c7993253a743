// /healthz: the process answers. /readyz: the platform is ready and the database (when one is
// configured) answers. /metrics: the prom-client registry in Prometheus text format, unless the
// metrics have a listener of their own (the controller's SLESS_METRICS_PORT: metrics-server.ts).
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Platform } from '../platform/types.ts';
import type { StoreHealth } from '../store/types.ts';

export interface HealthPluginOptions {
  readonly platform: Platform;
  readonly registry: Registry;
  readonly store?: StoreHealth;
  /** Serve /metrics here (false where metrics-server.ts serves it on another port). */
  readonly metrics: boolean;
}

export function healthPlugin(app: FastifyInstance, opts: HealthPluginOptions, done: (err?: Error) => void): void {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const [platform, store] = await Promise.all([
      opts.platform.ready().catch((err: unknown) => ({ ok: false, detail: `platform check failed: ${String(err)}` })),
      opts.store?.check().catch((err: unknown) => ({ ok: false, detail: `database check failed: ${String(err)}` })),
    ]);
    const checks: Record<string, { ok: boolean; detail?: string }> = { platform };
    if (store) checks.database = store;
    const ok = Object.values(checks).every((c) => c.ok);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks });
  });

  if (opts.metrics) {
    app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
      const text = await opts.registry.metrics();
      return reply.type(opts.registry.contentType).send(text);
    });
  }
  done();
}
