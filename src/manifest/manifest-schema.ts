// The function.yaml schema (docs/contract.md §1) in zod 4. Objects are strict: an unknown key is an error,
// because a misspelt key (`memory: 512`) silently ignored is worse than a failed sync.
import { posix } from 'node:path';
import { z } from 'zod';
import { FUNCTION_DEFAULTS } from './defaults.ts';
import { RUNTIMES, type Runtime } from './types.ts';
import { checkCron, checkTimezone } from './check-cron.ts';
import { envValueProblem, eventProblem } from './value-rules.ts';
import { checkedString, DNS_LABEL, dnsLabel, secretName } from './patterns.ts';
import { queueTriggerSchema } from './queue-schema.ts';

export { DNS_LABEL };
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PY_IDENT = '[A-Za-z_][A-Za-z0-9_]*';
const JS_IDENT = '[A-Za-z_$][A-Za-z0-9_$]*';
const PY_ENTRYPOINT = new RegExp(`^${PY_IDENT}(\\.${PY_IDENT})+$`);
// "<file>.<export>": the file may sit in a subfolder and carry its extension (lib/api.mjs.handle).
const NODE_ENTRYPOINT = new RegExp(`^[A-Za-z0-9_@][A-Za-z0-9_@./-]*\\.${JS_IDENT}$`);

export const FUNCTION_NAME_MAX = 53;

/** Why `name` cannot name a function, or undefined. Shared by `name:` and the directory-name default. */
export function checkFunctionName(name: string): string | undefined {
  if (name.length > FUNCTION_NAME_MAX) return `"${name}" is longer than ${FUNCTION_NAME_MAX} characters`;
  if (!DNS_LABEL.test(name)) {
    return `"${name}" is not a DNS-1123 label: use lowercase letters, digits and "-", starting and ending with a letter or digit`;
  }
  return undefined;
}

const intIn = (min: number, max: number) =>
  z
    .int({ error: `must be a whole number from ${min} to ${max}` })
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** Repo-relative path: no absolute paths, no backslashes, no `..` leaving the repository. */
const repoPath = z.string().transform((raw, ctx) => {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  if (raw.includes('\\') || raw.includes('\0')) return fail(`"${raw}" must use "/" as separator`);
  if (raw.startsWith('/')) return fail(`"${raw}" is absolute; write it relative to the repository root`);
  const normal = posix.normalize(raw).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) return fail(`"${raw}" leaves the repository`);
  if (normal === '.' || normal === '')
    return fail(`"${raw}" names the whole repository; name a folder or file in it`);
  return normal;
});

/**
 * Plain JSON only: YAML's .inf/.nan have no JSON form and would reach handlers as null. Nested at most
 * MAX_EVENT_DEPTH deep (checked first, without recursion), so the walk below stays shallow.
 */
const jsonValue = z.unknown().superRefine((value, ctx) => {
  const tooDeep = eventProblem(value);
  if (tooDeep !== undefined) {
    ctx.addIssue({ code: 'custom', message: tooDeep });
    return;
  }
  const walk = (v: unknown, path: (string | number)[]): void => {
    if (typeof v === 'number' && !Number.isFinite(v)) {
      ctx.addIssue({ code: 'custom', path, message: `${String(v)} has no JSON form` });
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, i]));
    else if (v !== null && typeof v === 'object')
      for (const [k, item] of Object.entries(v)) walk(item, [...path, k]);
  };
  walk(value, []);
});

const schedule = z.strictObject({
  name: dnsLabel('schedule name'),
  cron: checkedString((cron) => checkCron(cron)),
  timezone: checkedString(checkTimezone).optional(),
  event: jsonValue.optional(),
});

const job = z.strictObject({
  name: dnsLabel('job name'),
  run_id: z
    .int({ error: 'must be a whole number >= 0; raise it to run the job again' })
    .min(0, 'must be >= 0 (0 means "do not run")'),
  event: jsonValue.optional(),
});

/** Types only: the rules between the fields (min <= max, the idle floor, the cap) are scaleProblems'. */
const scale = z.strictObject({
  min: z.int({ error: 'must be a whole number (0 scales to zero when idle)' }).optional(),
  max: z.int({ error: 'must be a whole number' }).optional(),
  concurrency: z.int({ error: 'must be a whole number of requests in flight per replica' }).optional(),
  idle: z.string({ error: 'must be a duration like 30s, 5m or 1h30m' }).optional(),
});

const envName = checkedString((k) => {
  if (!ENV_NAME.test(k)) return `"${k}" is not a valid environment variable name (A-Z, a-z, 0-9, _)`;
  if (k === 'PORT' || k.startsWith('SLESS_'))
    return `"${k}" is reserved for the sless runtime; choose another name`;
  return undefined;
});

export const manifestSchema = z.strictObject({
  name: checkedString(checkFunctionName).optional(),
  runtime: z.enum(RUNTIMES, {
    error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${RUNTIMES.join(', ')}`),
  }),
  entrypoint: z.string().optional(),
  memory_mb: intIn(64, 8192).default(FUNCTION_DEFAULTS.memoryMb),
  timeout_sec: intIn(1, 900).default(FUNCTION_DEFAULTS.timeoutSec),
  env: z.record(envName, z.string({ error: 'must be a string; for an empty value write ""' }).superRefine((value, ctx) => {
    const why = envValueProblem(value);
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
  })).default({}),
  env_from_secrets: z.array(secretName()).default([]),
  include: z.array(repoPath).default([]),
  ignore: z.array(z.string().min(1, 'an empty pattern matches nothing; remove it')).default([]),
  http: z.strictObject({ enabled: z.boolean().default(FUNCTION_DEFAULTS.httpEnabled) }).default({ enabled: FUNCTION_DEFAULTS.httpEnabled }),
  scale: scale.optional(),
  // How many: a configured cap (ManifestCaps), checked in cross-check.ts.
  schedules: z.array(schedule).default([]),
  jobs: z.array(job).default([]),
  queues: z.array(queueTriggerSchema).default([]),
});

/** The keys each mapping may hold, for "unknown key" messages; keyed by the path with indexes dropped. */
export const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  '': Object.keys(manifestSchema.shape),
  http: ['enabled'],
  scale: Object.keys(scale.shape),
  schedules: Object.keys(schedule.shape),
  jobs: Object.keys(job.shape),
  queues: Object.keys(queueTriggerSchema.shape),
};

export type RawManifest = z.output<typeof manifestSchema>;

export const DEFAULT_ENTRYPOINT = FUNCTION_DEFAULTS.entrypoint;

export function checkEntrypoint(runtime: Runtime, entrypoint: string): string | undefined {
  if (runtime.startsWith('python')) {
    return PY_ENTRYPOINT.test(entrypoint)
      ? undefined
      : `"${entrypoint}" is not "<module>.<function>" (e.g. handler.handle or pkg.api.handle)`;
  }
  if (runtime.startsWith('nodejs')) {
    const file = entrypoint.slice(0, entrypoint.lastIndexOf('.'));
    const escapes = file.split('/').some((part) => part === '..' || part === '');
    return NODE_ENTRYPOINT.test(entrypoint) && !escapes
      ? undefined
      : `"${entrypoint}" is not "<file>.<export>" inside the function folder (e.g. handler.handle or lib/api.handle)`;
  }
  // Go builds one binary per function; the entrypoint is ignored (docs/contract.md §1).
  return undefined;
}
