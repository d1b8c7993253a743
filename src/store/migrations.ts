// Versioned schema of the Postgres store. Append only: a released migration is never edited.
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'invocations and builds',
    sql: `
      CREATE TABLE sless_invocations (
        id bigserial PRIMARY KEY,
        namespace text NOT NULL,
        function text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        duration_ms double precision NOT NULL,
        request_bytes bigint NOT NULL,
        response_bytes bigint NOT NULL,
        started_at timestamptz NOT NULL
      );
      CREATE INDEX sless_invocations_function ON sless_invocations (namespace, function, started_at DESC);
      CREATE INDEX sless_invocations_started ON sless_invocations (started_at);
      CREATE TABLE sless_builds (
        id bigserial PRIMARY KEY,
        namespace text NOT NULL,
        function text NOT NULL,
        code_hash text NOT NULL,
        outcome text NOT NULL,
        image_ref text,
        message text,
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        duration_ms double precision
      );
      CREATE INDEX sless_builds_function ON sless_builds (namespace, function, started_at DESC);
      CREATE INDEX sless_builds_started ON sless_builds (started_at);
    `,
  },
  {
    version: 2,
    name: 'cold starts in the invocation log',
    sql: `ALTER TABLE sless_invocations ADD COLUMN cold_start_ms double precision;`,
  },
];
