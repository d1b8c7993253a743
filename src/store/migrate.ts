// Runs the pending migrations once, even when several replicas start together: the whole run
// holds a session-level advisory lock, and each migration commits with its version row.
import type pg from 'pg';
import { MIGRATIONS, type Migration } from './migrations.ts';

/** Arbitrary but fixed: the advisory lock id that serializes sless migrations in one database. */
const MIGRATION_LOCK_ID = 0x51e55;

export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS sless_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM sless_schema_migrations');
      const done = new Set(rows.map((r) => r.version));
      const applied: number[] = [];
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(m.version)) continue;
        try {
          await client.query('BEGIN');
          await client.query(m.sql);
          await client.query('INSERT INTO sless_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw new Error(`database migration ${m.version} (${m.name}) failed; the schema is left at the previous version`, { cause: err });
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
