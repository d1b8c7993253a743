// Between the sless objects in the API server and the platform's records (pure). Who manages an object
// is read from the `sless.kube5s.ru/repository` label that every FunctionRepository puts on what it
// generates; objects without it were made through /v1.
import { queueSettingsOf } from '../../manifest/queue-schema.ts';
import { TRIGGER_DEFAULTS } from '../../manifest/defaults.ts';
import { functionSpecDefaults, repositorySpecDefaults } from './objects/crd-defaults.ts';
import { envOf } from './objects/stored-env.ts';
import type { Runtime } from '../../manifest/types.ts';
import { compactScale } from '../../manifest/scale-spec.ts';
import { servesHttp } from '../rules.ts';
import type { FunctionRecord, JobRecord, ManagedBy, Replicas, RepositoryRecord, TriggerRecord } from '../types.ts';
import { LABELS } from './objects/meta.ts';
import type { Condition, FunctionJobResource, FunctionResource, RepositoryResource, TriggerResource } from './objects/resources.ts';
import { envValueProblem } from '../../manifest/value-rules.ts';

interface Labelled {
  metadata?: { labels?: Record<string, string> };
}

export function managedByOf(obj: Labelled): ManagedBy {
  const repo = obj.metadata?.labels?.[LABELS.repository];
  return repo ? `git:${repo}` : 'api';
}

/** The repository an object belongs to, or undefined for objects made through /v1. */
export function repositoryOf(obj: Labelled): string | undefined {
  return obj.metadata?.labels?.[LABELS.repository] || undefined;
}

/** `/fn/<ns>/<name>` under the public base URL (relative when the base is unknown). */
export function publicFunctionUrl(publicBaseUrl: string | undefined, namespace: string, name: string): string {
  return `${(publicBaseUrl ?? '').replace(/\/+$/, '')}/fn/${namespace}/${name}`;
}

/** Whether the http Triggers of a function allow serving: none means enabled (as the Function reconciler decides). */
export function httpEnabledFrom(triggers: readonly TriggerResource[], fnName: string): boolean {
  const http = triggers.filter((t) => t.spec?.type === 'http' && t.spec.functionRef === fnName);
  return servesHttp(http.map((t) => t.spec?.enabled ?? TRIGGER_DEFAULTS.enabled));
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a stored env cannot be used (the CRD leaves env untyped so both shapes pass), or undefined. */
export function envProblem(env: unknown): string | undefined {
  if (env === undefined || env === null) return undefined;
  if (typeof env !== 'object') return 'spec.env must be a map NAME: value or a list of {name, value}';
  const entries: Array<[unknown, unknown]> = Array.isArray(env) ? env.map(listEntry) : Object.entries(env);
  if (entries.length > 256) return `spec.env has ${entries.length} variables; at most 256`;
  if (Array.isArray(env)) {
    const fromSecret = env.find((e: unknown) => e !== null && typeof e === 'object' && 'valueFrom' in e) as { name?: unknown; valueFrom?: unknown } | undefined;
    // The Go operator passed Kubernetes' valueFrom through; read as {name, value} it would run with
    // the variable empty. sless reads Secrets only through envFromSecrets (its checks: tenant-rules.ts).
    if (fromSecret) return `spec.env.${String(fromSecret.name)} takes its value from a Secret (valueFrom), which sless does not read: put the Secret's keys in envFromSecrets: [${secretNameOf(fromSecret.valueFrom)}] and drop the entry`;
  }
  for (const [name, value] of entries) {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) return `spec.env: ${JSON.stringify(name)} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`;
    if (typeof value !== 'string') return `spec.env.${name} must be a string, not ${JSON.stringify(value)}`;
    if (value.length > 32768) return `spec.env.${name} is longer than 32768 characters`;
    const why = envValueProblem(value);
    if (why !== undefined) return `spec.env.${name} ${why}`;
  }
  return undefined;
}

function listEntry(e: unknown): [unknown, unknown] {
  return e && typeof e === 'object' ? [(e as { name?: unknown }).name, (e as { value?: unknown }).value ?? ''] : [e, undefined];
}

/** The Secret a valueFrom names (secretKeyRef or configMapKeyRef), for the hint; `<secret>` when none. */
function secretNameOf(valueFrom: unknown): string {
  const ref = (valueFrom as { secretKeyRef?: { name?: unknown } } | undefined)?.secretKeyRef?.name;
  return typeof ref === 'string' && ref !== '' ? ref : '<secret>';
}

function iso(t: string | Date | undefined): string | undefined {
  return t === undefined ? undefined : new Date(t).toISOString();
}

/**
 * Replicas as the function's Deployment says (spec.replicas wanted, availableReplicas serving), or
 * undefined without one (not built yet, or the watch has not listed it).
 */
export function replicasOfDeployment(d: { spec?: { replicas?: number }; status?: { availableReplicas?: number } } | undefined): Replicas | undefined {
  if (!d) return undefined;
  return { desired: d.spec?.replicas ?? 1, ready: d.status?.availableReplicas ?? 0 };
}

export function functionRecord(fn: FunctionResource, opts: { httpEnabled: boolean; publicBaseUrl?: string; replicas?: Replicas }): FunctionRecord {
  const name = fn.metadata?.name ?? '';
  const namespace = fn.metadata?.namespace ?? '';
  const spec = fn.spec;
  const status = fn.status ?? {};
  const filled = functionSpecDefaults(spec);
  return {
    name,
    namespace,
    runtime: (spec?.runtime ?? 'nodejs20') as Runtime,
    entrypoint: filled.entrypoint,
    memoryMb: filled.memoryMB,
    timeoutSec: filled.timeoutSec,
    env: envOf(spec?.env),
    envFromSecrets: [...(spec?.envFromSecrets ?? [])],
    httpEnabled: opts.httpEnabled,
    ...(compactScale(spec?.scale) === undefined ? {} : { scale: compactScale(spec?.scale) }),
    ...(opts.replicas
      ? { replicas: opts.replicas }
      : status.replicas
        ? { replicas: { desired: status.replicas.desired ?? 0, ready: status.replicas.ready ?? 0 } }
        : {}),
    phase: status.phase ?? 'Pending',
    imageRef: status.imageRef || undefined,
    message: status.message || undefined,
    codeHash: spec?.codeHash,
    lastBuiltAt: iso(status.lastBuiltAt),
    url: status.url || publicFunctionUrl(opts.publicBaseUrl, namespace, name),
    managedBy: managedByOf(fn),
  };
}

export function triggerRecord(t: TriggerResource): TriggerRecord {
  const spec = t.spec;
  const enabled = spec?.enabled ?? TRIGGER_DEFAULTS.enabled;
  return {
    name: t.metadata?.name ?? '',
    namespace: t.metadata?.namespace ?? '',
    type: spec?.type ?? 'http',
    functionRef: spec?.functionRef ?? '',
    schedule: spec?.schedule,
    timezone: spec?.timezone,
    eventJson: spec?.eventJSON,
    enabled,
    // Until the Trigger reconciler has answered, the spec is the best guess.
    active: t.status?.active ?? enabled,
    url: t.status?.url || undefined,
    lastScheduleTime: iso(t.status?.lastScheduleTime),
    ...(spec?.queue ? { queue: queueSettingsOf(spec.queue) } : {}),
    ...(t.status?.queueStats ? { queueStats: { ...t.status.queueStats } } : {}),
    managedBy: managedByOf(t),
  };
}

export function jobRecord(j: FunctionJobResource): JobRecord {
  const spec = j.spec;
  const runId = spec?.runID ?? 0;
  const status = j.status ?? {};
  // A status that describes an older runID says nothing about the current one.
  const current = status.runID === undefined || status.runID === runId;
  return {
    name: j.metadata?.name ?? '',
    namespace: j.metadata?.namespace ?? '',
    functionRef: spec?.functionRef ?? '',
    eventJson: spec?.eventJSON,
    runId,
    phase: current ? (status.phase ?? (runId === 0 ? 'Skipped' : 'Pending')) : 'Pending',
    jobName: current ? status.jobName || undefined : undefined,
    startTime: current ? iso(status.startTime) : undefined,
    completionTime: current ? iso(status.completionTime) : undefined,
    message: current ? status.message || undefined : undefined,
    managedBy: managedByOf(j),
  };
}

function readyOf(conditions: readonly Condition[] | undefined): RepositoryRecord['ready'] {
  const c = conditions?.find((x) => x.type === 'Ready');
  return c ? { status: c.status, reason: c.reason, message: c.message } : undefined;
}

export function repositoryRecord(r: RepositoryResource): RepositoryRecord {
  const name = r.metadata?.name ?? '';
  const namespace = r.metadata?.namespace ?? '';
  const spec = r.spec;
  const status = r.status ?? {};
  const ready = readyOf(status.conditions);
  return {
    name,
    namespace,
    url: spec?.url ?? '',
    ...repositorySpecDefaults(spec),
    secretName: spec?.secretRef?.name,
    revision: status.revision || undefined,
    lastSyncTime: iso(status.lastSyncTime),
    webhookPath: status.webhookPath || `/hooks/${namespace}/${name}`,
    functions: (status.functions ?? []).map((f) => ({
      name: f.name,
      path: f.path,
      ...(f.codeHash ? { codeHash: f.codeHash } : {}),
      ...(f.error ? { error: f.error } : {}),
    })),
    ...(ready ? { ready } : {}),
  };
}
