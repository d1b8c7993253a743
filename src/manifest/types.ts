// The parsed, defaulted form of a function.yaml (docs/contract.md §1). Internal names are camelCase;
// the YAML keys stay snake_case.

export const RUNTIMES = ['python3.11', 'python3.12', 'nodejs20', 'nodejs22', 'go1.23'] as const;
export type Runtime = (typeof RUNTIMES)[number];

export interface ScheduleSpec {
  readonly name: string;
  readonly cron: string;
  readonly timezone?: string;
  readonly event?: unknown;
}

export interface JobSpec {
  readonly name: string;
  readonly runId: number;
  readonly event?: unknown;
}

/** A `queues:` entry: every message of `queue` calls the function once (issue 34). */
export interface QueueTriggerSpec {
  readonly name: string;
  /** amqp:// or amqps:// without credentials. */
  readonly url: string;
  /** Names the Secret (Kubernetes) or the --secrets-dir folder (sless dev) holding username/password. */
  readonly secret?: string;
  readonly queue: string;
  readonly declare: boolean;
  readonly prefetch: number;
  readonly retries: number;
  readonly deadLetter: string;
}

/** A queue trigger's settings apart from its name (Trigger spec.queue, /v1 `queue`). */
export type QueueSettings = Omit<QueueTriggerSpec, 'name'>;

export interface FunctionManifest {
  readonly name: string;
  readonly runtime: Runtime;
  readonly entrypoint: string;
  readonly memoryMb: number;
  readonly timeoutSec: number;
  readonly env: Readonly<Record<string, string>>;
  readonly envFromSecrets: readonly string[];
  readonly include: readonly string[];
  readonly ignore: readonly string[];
  readonly http: { readonly enabled: boolean };
  /** `scale:` as written (scale-spec.ts resolves the defaults); undefined when absent or empty. */
  readonly scale?: ScaleInput;
  readonly schedules: readonly ScheduleSpec[];
  readonly jobs: readonly JobSpec[];
  /** Present only when function.yaml declares queue triggers (so manifests without stay as they were). */
  readonly queues?: readonly QueueTriggerSpec[];
}

/** One problem with one input file; rendered as `file:line: key: message`. */
export interface ManifestProblem {
  /** Repo-relative (or CLI-relative) path of the file. */
  readonly file: string;
  /** 1-based; 0 when the problem is not tied to a line. */
  readonly line: number;
  readonly column?: number;
  /** Dotted key path, e.g. `schedules[1].cron`; '' for the whole file. */
  readonly key: string;
  readonly message: string;
}

/** `scale:` as written; every field optional. `idle` keeps its text ("5m"), as /v1 shows it. */
export interface ScaleInput {
  readonly min?: number;
  readonly max?: number;
  readonly concurrency?: number;
  readonly idle?: string;
}
