// The invocation and build logs behind /v1/.../invocations and /builds. Writers call record(),
// which never blocks, never throws and never waits on a database: the proxy calls it per request.
export interface InvocationRecord {
  readonly namespace: string;
  readonly function: string;
  readonly method: string;
  /** The path below /fn/{ns}/{name}, without the query. */
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  /** ISO 8601 time the request arrived. */
  readonly startedAt: string;
  /** Set when the call waited for its function to start from zero: how long (part of durationMs). */
  readonly coldStartMs?: number;
}

export type BuildOutcome = 'started' | 'succeeded' | 'failed';

export interface BuildRecord {
  readonly namespace: string;
  readonly function: string;
  readonly codeHash: string;
  readonly outcome: BuildOutcome;
  readonly imageRef?: string;
  readonly message?: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly durationMs?: number;
}

interface Log<T> {
  /** Queues the record; never blocks or throws (drops and counts when it cannot keep up). */
  record(entry: T): void;
  /** Newest first. */
  list(namespace: string, fn: string, limit: number): Promise<T[]>;
}

export type InvocationLog = Log<InvocationRecord>;
export type BuildLog = Log<BuildRecord>;

/** What /healthz asks of a store (a detail, never readiness); undefined for stores with nothing to check. */
export interface StoreHealth {
  /** undefined: no store is configured after all (the controller opens it after building the app). */
  check(): Promise<{ ok: boolean; detail?: string } | undefined>;
}
