// The Postgres store: invocation and build logs in two tables, migrated at start, written in
// batches by BatchWriter (never on the request path), trimmed by age, and checked by /readyz.
import pg from 'pg';
import type { Metrics } from '../metrics/metrics.ts';
import { BatchWriter } from './batch-writer.ts';
import { migrate } from './migrate.ts';
import type { BuildLog, BuildRecord, InvocationLog, InvocationRecord, StoreHealth } from './types.ts';

export interface PgStoreOptions {
  readonly connectionString: string;
  readonly metrics: Metrics;
  /** Records older than this are deleted. Default 14 days. */
  readonly retentionDays?: number;
  /** How often the retention delete runs. Default 1 hour. */
  readonly retentionIntervalMs?: number;
  readonly flushIntervalMs?: number;
  readonly batchSize?: number;
  readonly maxQueue?: number;
  readonly logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly poolSize?: number;
}

export interface PgStore {
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  readonly health: StoreHealth;
  /** Trims old records now (also runs periodically). Returns how many rows went. */
  applyRetention(): Promise<number>;
  /** Writes what is queued, then closes the pool. */
  close(): Promise<void>;
  /** Writes what is queued (tests, shutdown). */
  flush(): Promise<void>;
}

const INVOCATION_COLUMNS = [
  ['namespace', 'text'],
  ['function', 'text'],
  ['method', 'text'],
  ['path', 'text'],
  ['status', 'integer'],
  ['duration_ms', 'double precision'],
  ['request_bytes', 'bigint'],
  ['response_bytes', 'bigint'],
  ['started_at', 'timestamptz'],
  ['cold_start_ms', 'double precision'],
] as const;

const BUILD_COLUMNS = [
  ['namespace', 'text'],
  ['function', 'text'],
  ['code_hash', 'text'],
  ['outcome', 'text'],
  ['image_ref', 'text'],
  ['message', 'text'],
  ['started_at', 'timestamptz'],
  ['finished_at', 'timestamptz'],
  ['duration_ms', 'double precision'],
] as const;

type Value = string | number | null;

/** One INSERT for a whole batch: each column travels as one array parameter. */
function insertBatch(table: string, columns: ReadonlyArray<readonly [string, string]>) {
  const names = columns.map(([c]) => c).join(', ');
  const unnest = columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  const sql = `INSERT INTO ${table} (${names}) SELECT * FROM unnest(${unnest})`;
  return async (pool: pg.Pool, rows: Value[][]) => {
    const params = columns.map((_, i) => rows.map((r) => r[i] ?? null));
    await pool.query(sql, params);
  };
}

const insertInvocations = insertBatch('sless_invocations', INVOCATION_COLUMNS);
const insertBuilds = insertBatch('sless_builds', BUILD_COLUMNS);

export async function openPgStore(options: PgStoreOptions): Promise<PgStore> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: 3_000,
    idleTimeoutMillis: 30_000,
    // Keeps a hung database from holding a flush (and so the whole queue) for long.
    query_timeout: 10_000,
  });
  // An idle client whose server went away emits here; without a listener the process would crash.
  pool.on('error', (err) => options.logger?.warn({ err: err.message }, 'idle database connection failed'));
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error('cannot prepare the invocation/build log database (DATABASE_URL): check that it is reachable and that the user may create tables', {
      cause: err,
    });
  }

  // The database's state for sless_database_up, /healthz and one log line per change. Readiness does
  // not depend on it: /fn, builds and syncs never need the database (health-plugin.ts).
  let up = true;
  options.metrics.databaseUp.set({ store: 'postgres' }, 1);
  const setUp = (ok: boolean, detail?: string) => {
    options.metrics.databaseUp.set({ store: 'postgres' }, ok ? 1 : 0);
    if (ok === up) return;
    up = ok;
    if (ok) options.logger?.info({}, 'the invocation/build log database answers again');
    else options.logger?.warn({ detail }, 'the invocation/build log database does not answer: records are dropped until it does; /fn, builds and syncs go on');
  };

  let lastWarn = 0;
  const warnWrite = (what: string) => (err: unknown, count: number) => {
    setUp(false, (err as Error).message);
    // One line per 10 s at most: an outage would otherwise log per batch.
    if (Date.now() - lastWarn < 10_000) return;
    lastWarn = Date.now();
    options.logger?.warn({ err: (err as Error).message, dropped: count }, `could not write ${what} records; dropping them (counted in metrics)`);
  };
  const writerOptions = { flushIntervalMs: options.flushIntervalMs, batchSize: options.batchSize, maxQueue: options.maxQueue };
  const clean = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

  const invocations = new BatchWriter<InvocationRecord>({
    ...clean(writerOptions),
    write: async (batch) => {
      await insertInvocations(
        pool,
        batch.map((r) => [r.namespace, r.function, r.method, r.path, r.status, r.durationMs, r.requestBytes, r.responseBytes, r.startedAt, r.coldStartMs ?? null]),
      );
      setUp(true);
    },
    onDrop: (count, reason) => options.metrics.invocationLogDropped.inc({ reason }, count),
    onWriteError: warnWrite('invocation'),
  });
  const builds = new BatchWriter<BuildRecord>({
    ...clean(writerOptions),
    write: async (batch) => {
      await insertBuilds(
        pool,
        batch.map((b) => [
          b.namespace,
          b.function,
          b.codeHash,
          b.outcome,
          b.imageRef ?? null,
          b.message ?? null,
          b.startedAt,
          b.finishedAt ?? null,
          b.durationMs ?? null,
        ]),
      );
      setUp(true);
    },
    onDrop: (count, reason) => options.metrics.buildLogDropped.inc({ reason }, count),
    onWriteError: warnWrite('build'),
  });

  const retentionDays = options.retentionDays ?? 14;
  const applyRetention = async () => {
    let removed = 0;
    for (const table of ['sless_invocations', 'sless_builds']) {
      const res = await pool.query(`DELETE FROM ${table} WHERE started_at < now() - make_interval(days => $1)`, [retentionDays]);
      removed += res.rowCount ?? 0;
    }
    return removed;
  };
  const retentionTimer = setInterval(() => {
    applyRetention().catch((err: unknown) => options.logger?.warn({ err: (err as Error).message }, 'retention delete failed; retrying later'));
  }, options.retentionIntervalMs ?? 3_600_000);
  retentionTimer.unref();

  /** One function's newest `limit` rows of a log table, newest first (id orders rows of the same instant). */
  const newestRows = async <R extends pg.QueryResultRow>(table: string, columns: string, namespace: string, fn: string, limit: number) => {
    const { rows } = await pool.query<R>(
      `SELECT ${columns} FROM ${table} WHERE namespace = $1 AND function = $2 ORDER BY started_at DESC, id DESC LIMIT $3`,
      [namespace, fn, limit],
    );
    return rows;
  };

  const invocationLog: InvocationLog = {
    record: (entry) => invocations.record(entry),
    list: async (namespace, fn, limit) => {
      const rows = await newestRows<{
        method: string;
        path: string;
        status: number;
        duration_ms: number;
        request_bytes: string;
        response_bytes: string;
        started_at: Date;
        cold_start_ms: number | null;
      }>('sless_invocations', 'method, path, status, duration_ms, request_bytes, response_bytes, started_at, cold_start_ms', namespace, fn, limit);
      return rows.map((r) => ({
        namespace,
        function: fn,
        method: r.method,
        path: r.path,
        status: r.status,
        durationMs: r.duration_ms,
        requestBytes: Number(r.request_bytes),
        responseBytes: Number(r.response_bytes),
        startedAt: r.started_at.toISOString(),
        ...(r.cold_start_ms === null ? {} : { coldStartMs: r.cold_start_ms }),
      }));
    },
  };
  const buildLog: BuildLog = {
    record: (entry) => builds.record(entry),
    list: async (namespace, fn, limit) => {
      const rows = await newestRows<{
        code_hash: string;
        outcome: BuildRecord['outcome'];
        image_ref: string | null;
        message: string | null;
        started_at: Date;
        finished_at: Date | null;
        duration_ms: number | null;
      }>('sless_builds', 'code_hash, outcome, image_ref, message, started_at, finished_at, duration_ms', namespace, fn, limit);
      return rows.map((r) => ({
        namespace,
        function: fn,
        codeHash: r.code_hash,
        outcome: r.outcome,
        ...(r.image_ref !== null ? { imageRef: r.image_ref } : {}),
        ...(r.message !== null ? { message: r.message } : {}),
        startedAt: r.started_at.toISOString(),
        ...(r.finished_at !== null ? { finishedAt: r.finished_at.toISOString() } : {}),
        ...(r.duration_ms !== null ? { durationMs: r.duration_ms } : {}),
      }));
    },
  };

  return {
    invocationLog,
    buildLog,
    health: {
      check: async () => {
        try {
          await pool.query('SELECT 1');
          setUp(true);
          return { ok: true };
        } catch (err) {
          const detail = `database unreachable: ${(err as Error).message}`;
          setUp(false, detail);
          return { ok: false, detail };
        }
      },
    },
    applyRetention,
    flush: async () => {
      await Promise.all([invocations.flush(), builds.flush()]);
    },
    close: async () => {
      clearInterval(retentionTimer);
      await Promise.all([invocations.close(), builds.close()]);
      await pool.end();
    },
  };
}
