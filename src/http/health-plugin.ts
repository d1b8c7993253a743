// /healthz: the process answers, with the optional database's state (DATABASE_URL) as a detail.
// /readyz: the platform is ready. The database is not part of readiness: /fn, builds and syncs never
// need it (records are dropped and counted while it is down), and a 503 would take every replica out
// of the Service at once. /metrics: the prom-client registry in Prometheus text format, unless the
// metrics have a listener of their own (the controller's SLESS_METRICS_PORT: metrics-server.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Platform } from '../platform/types.ts';
import type { StoreHealth } from '../store/types.ts';

/** How long /healthz waits for the database's answer (the probes' timeout is 3 s). */
const DATABASE_CHECK_MS = 1_000;

export interface HealthPluginOptions {
  readonly platform: Platform;
  readonly registry: Registry;
  readonly store?: StoreHealth;
  /** Serve /metrics here (false where metrics-server.ts serves it on another port). */
  readonly metrics: boolean;
}

export function healthPlugin(app: FastifyInstance, opts: HealthPluginOptions, done: (err?: Error) => void): void {
  app.get('/healthz', { logLevel: 'warn' }, async () => {
    if (!opts.store) return { status: 'ok' };
    // Bounded well inside the liveness probe's timeout: a hung database must not get the pod restarted.
    const timer = new AbortController();
    const database = await Promise.race([
      opts.store.check().catch((err: unknown) => ({ ok: false, detail: `database check failed: ${String(err)}` })),
      sleep(DATABASE_CHECK_MS, undefined, { signal: timer.signal }).then(
        () => ({ ok: false, detail: `database check did not answer within ${DATABASE_CHECK_MS} ms` }),
        () => undefined, // cancelled: the check answered first
      ),
    ]).finally(() => timer.abort());
    return database ? { status: 'ok', database } : { status: 'ok' };
  });

  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const platform = await opts.platform.ready().catch((err: unknown) => ({ ok: false, detail: `platform check failed: ${String(err)}` }));
    return reply.code(platform.ok ? 200 : 503).send({ status: platform.ok ? 'ready' : 'not ready', checks: { platform } });
  });

  if (opts.metrics) {
    app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
      const text = await opts.registry.metrics();
      return reply.type(opts.registry.contentType).send(text);
    });
  }
  done();
}
