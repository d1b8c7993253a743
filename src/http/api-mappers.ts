// Between the platform's camelCase records and /v1's snake_case JSON (pure).
import type { Runtime } from '../manifest/types.ts';
import type {
  CodeFile,
  FunctionInput,
  FunctionRecord,
  JobInput,
  JobRecord,
  RepositoryInput,
  RepositoryRecord,
  TriggerInput,
  TriggerRecord,
  TriggerType,
} from '../platform/types.ts';
import type { BuildRecord, InvocationRecord } from '../store/types.ts';
import { resolveScale, scaleProblems } from '../manifest/scale-spec.ts';
import type { ScaleInput } from '../manifest/types.ts';
import { envValueProblem, eventProblem } from '../manifest/value-rules.ts';
import { HttpError } from './errors.ts';

/** The env a body carries, refused with 400 when a value could not reach the function (value-rules.ts). */
function checkedEnv(env: Record<string, string> | undefined): Record<string, string> | undefined {
  for (const [key, value] of Object.entries(env ?? {})) {
    const why = envValueProblem(value);
    if (why !== undefined) throw new HttpError('bad_request', `env_vars.${key}: ${why}`);
  }
  return env;
}

/** The event a body carries, refused with 400 when it nests too deeply (value-rules.ts). */
function checkedEvent<T>(event: T): T {
  const why = event === undefined ? undefined : eventProblem(event);
  if (why !== undefined) throw new HttpError('bad_request', `event_json: ${why}`);
  return event;
}

export interface FunctionBody {
  name?: string;
  runtime?: Runtime;
  entrypoint?: string;
  memory_mb?: number;
  timeout_sec?: number;
  env_vars?: Record<string, string>;
  env_from_secrets?: string[];
  http_enabled?: boolean;
  scale?: ScaleInput;
}

/** The rules between scale's fields (the JSON schema checks each one): 400 with the first problem. */
export function assertScale(scale: ScaleInput | undefined, cap: number | undefined): void {
  const [first] = scale ? scaleProblems(scale as Record<string, unknown>, cap) : [];
  if (first) throw new HttpError('bad_request', `scale.${first.key}: ${first.message}`);
}

/** A create's input (the schema requires runtime there). */
export function functionInput(name: string, body: FunctionBody & { runtime: Runtime }): FunctionInput {
  return {
    name,
    runtime: body.runtime,
    entrypoint: body.entrypoint,
    memoryMb: body.memory_mb,
    timeoutSec: body.timeout_sec,
    env: checkedEnv(body.env_vars),
    envFromSecrets: body.env_from_secrets,
    httpEnabled: body.http_enabled,
    scale: body.scale,
  };
}

/**
 * A PUT's input: the fields the body carries over the function's current settings. http_enabled stays
 * unset when the body leaves it out, so the function's http triggers are not touched.
 */
export function functionUpdateInput(current: FunctionRecord, body: FunctionBody): FunctionInput {
  return {
    name: current.name,
    runtime: body.runtime ?? current.runtime,
    entrypoint: body.entrypoint ?? current.entrypoint,
    memoryMb: body.memory_mb ?? current.memoryMb,
    timeoutSec: body.timeout_sec ?? current.timeoutSec,
    env: checkedEnv(body.env_vars) ?? current.env,
    envFromSecrets: body.env_from_secrets ?? current.envFromSecrets,
    httpEnabled: body.http_enabled,
    // A PUT without scale keeps it; one with scale replaces it whole (fields left out: defaults).
    scale: body.scale ?? current.scale,
  };
}

/** GET .../source as JSON: text as it is, other bytes in base64. */
export function sourceJson(files: readonly CodeFile[]) {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    files: sorted.map((f) => {
      let text: string | undefined;
      try {
        text = f.content.includes(0) ? undefined : utf8.decode(f.content);
      } catch {
        text = undefined;
      }
      return text === undefined
        ? { path: f.path, content: f.content.toString('base64'), encoding: 'base64' as const, mode: f.mode }
        : { path: f.path, content: text, encoding: 'utf-8' as const, mode: f.mode };
    }),
  };
}

/** `scale` shows every field with its defaults filled in (`idle` as written); `cap`: SLESS_MAX_REPLICAS. */
export function functionJson(f: FunctionRecord, cap?: number) {
  const scale = resolveScale(f.scale, f.runtime, cap);
  return {
    name: f.name,
    namespace: f.namespace,
    runtime: f.runtime,
    entrypoint: f.entrypoint,
    memory_mb: f.memoryMb,
    timeout_sec: f.timeoutSec,
    env_vars: f.env,
    env_from_secrets: f.envFromSecrets,
    http_enabled: f.httpEnabled,
    scale: { min: scale.min, max: scale.max, concurrency: scale.concurrency, idle: scale.idle },
    // Absent while the platform has not reported them (never a made-up 0).
    replicas: f.replicas,
    phase: f.phase,
    image_ref: f.imageRef,
    message: f.message,
    code_hash: f.codeHash,
    last_built_at: f.lastBuiltAt,
    url: f.url,
    managed_by: f.managedBy,
    pinned: f.pinned ? { revision: f.pinned.revision, since: f.pinned.since } : null,
  };
}

export interface TriggerBody {
  name: string;
  type: TriggerType;
  function_ref: string;
  schedule?: string;
  timezone?: string;
  event_json?: string;
  queue?: { url: string; secret?: string; queue: string; declare?: boolean; prefetch?: number; retries?: number; dead_letter?: string };
  enabled?: boolean;
}

export function triggerInput(body: TriggerBody): TriggerInput {
  return {
    name: body.name,
    type: body.type,
    functionRef: body.function_ref,
    schedule: body.schedule,
    timezone: body.timezone,
    eventJson: checkedEvent(body.event_json),
    ...(body.queue
      ? {
          queue: {
            url: body.queue.url,
            queue: body.queue.queue,
            ...(body.queue.secret === undefined ? {} : { secret: body.queue.secret }),
            ...(body.queue.declare === undefined ? {} : { declare: body.queue.declare }),
            ...(body.queue.prefetch === undefined ? {} : { prefetch: body.queue.prefetch }),
            ...(body.queue.retries === undefined ? {} : { retries: body.queue.retries }),
            ...(body.queue.dead_letter === undefined ? {} : { deadLetter: body.queue.dead_letter }),
          },
        }
      : {}),
    enabled: body.enabled,
  };
}

export function triggerJson(t: TriggerRecord) {
  return {
    name: t.name,
    type: t.type,
    function_ref: t.functionRef,
    schedule: t.schedule,
    timezone: t.timezone,
    event_json: t.eventJson,
    enabled: t.enabled,
    active: t.active,
    url: t.url,
    last_schedule_time: t.lastScheduleTime,
    queue: t.queue && {
      url: t.queue.url,
      secret: t.queue.secret,
      queue: t.queue.queue,
      declare: t.queue.declare,
      prefetch: t.queue.prefetch,
      retries: t.queue.retries,
      dead_letter: t.queue.deadLetter,
    },
    lag: t.queueStats?.lag,
    in_flight: t.queueStats?.inFlight,
    dead_lettered: t.queueStats?.deadLettered,
    managed_by: t.managedBy,
  };
}

export interface JobBody {
  name: string;
  function_ref: string;
  event_json?: unknown;
  run_id?: number;
}

export function jobInput(body: JobBody): JobInput {
  const event = checkedEvent(body.event_json);
  return {
    name: body.name,
    functionRef: body.function_ref,
    eventJson: event === undefined || typeof event === 'string' ? event : JSON.stringify(event),
    runId: body.run_id,
  };
}

export function jobJson(j: JobRecord) {
  return {
    name: j.name,
    function_ref: j.functionRef,
    event_json: j.eventJson,
    run_id: j.runId,
    phase: j.phase,
    job_name: j.jobName,
    start_time: j.startTime,
    completion_time: j.completionTime,
    message: j.message,
    managed_by: j.managedBy,
  };
}

export interface RepositoryBody {
  name: string;
  url: string;
  branch?: string;
  path?: string;
  interval?: string;
  suspend?: boolean;
  prune?: boolean;
  credentials?: { username?: string; password?: string; token?: string };
  webhook_secret?: string;
}

export function repositoryInput(body: RepositoryBody): RepositoryInput {
  return {
    name: body.name,
    url: body.url,
    branch: body.branch,
    path: body.path,
    interval: body.interval,
    suspend: body.suspend,
    prune: body.prune,
    credentials: body.credentials,
    webhookSecret: body.webhook_secret,
  };
}

/** Credentials and the webhook secret are not part of a record, so they cannot come out here. */
export function repositoryJson(r: RepositoryRecord) {
  return {
    name: r.name,
    namespace: r.namespace,
    url: r.url,
    branch: r.branch,
    path: r.path,
    interval: r.interval,
    suspend: r.suspend,
    prune: r.prune,
    secret_name: r.secretName,
    revision: r.revision,
    last_sync_time: r.lastSyncTime,
    webhook_path: r.webhookPath,
    functions: r.functions.map((f) => ({ name: f.name, path: f.path, code_hash: f.codeHash, error: f.error })),
    ready: r.ready,
  };
}

export function invocationJson(i: InvocationRecord) {
  return {
    method: i.method,
    path: i.path,
    status: i.status,
    duration_ms: i.durationMs,
    request_bytes: i.requestBytes,
    response_bytes: i.responseBytes,
    started_at: i.startedAt,
    cold_start_ms: i.coldStartMs,
  };
}

export function buildJson(b: BuildRecord) {
  return {
    code_hash: b.codeHash,
    outcome: b.outcome,
    image_ref: b.imageRef,
    message: b.message,
    started_at: b.startedAt,
    finished_at: b.finishedAt,
    duration_ms: b.durationMs,
  };
}
