// Rules that relate several values (unique names in a list, an entrypoint's form per runtime). They
// run on the raw parsed YAML apart from the zod schema, because zod skips an object's refinements as
// soon as one of its fields fails, and a user fixing a file wants every problem in one pass.
import { checkEntrypoint } from './manifest-schema.ts';
import { queueEntryProblems } from './queue-schema.ts';
import { MANIFEST_LIMITS, type ManifestCaps } from './defaults.ts';
import { RUNTIMES, type Runtime } from './types.ts';
import { scaleProblems } from './scale-spec.ts';

export interface CrossIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** `caps`: the operator's caps (scale.max, how many schedules and jobs); left out, the defaults. */
export function crossCheck(raw: unknown, caps: ManifestCaps = {}): CrossIssue[] {
  if (!isRecord(raw)) return [];
  const issues: CrossIssue[] = [];
  for (const [list, cap, each, setting] of [
    ['schedules', caps.schedulesPerFunction ?? MANIFEST_LIMITS.schedulesPerFunction, 'each is a CronJob', 'SLESS_MAX_SCHEDULES_PER_FUNCTION'],
    ['jobs', caps.jobsPerFunction ?? MANIFEST_LIMITS.jobsPerFunction, 'each run is a Job', 'SLESS_MAX_JOBS_PER_FUNCTION'],
  ] as const) {
    const items = raw[list];
    if (Array.isArray(items) && items.length > cap) {
      issues.push({ path: [list], message: `${String(items.length)} ${list}; a function may declare at most ${String(cap)} (${each}; setting ${setting})` });
    }
  }
  for (const [list, what] of [
    ['schedules', 'schedule'],
    ['jobs', 'job'],
    ['queues', 'queue trigger'],
  ] as const) {
    repeats(raw[list], (item) => (isRecord(item) ? item['name'] : undefined)).forEach(([i, first, name]) =>
      issues.push({
        path: [list, i, 'name'],
        message: `${what} name "${name}" is already used by ${list}[${first}]; names must be unique within the function`,
      }),
    );
  }
  repeats(raw['env_from_secrets'], (item) => item).forEach(([i, , name]) =>
    issues.push({ path: ['env_from_secrets', i], message: `"${name}" is listed twice` }),
  );
  const queues = raw['queues'];
  if (Array.isArray(queues)) {
    (queues as unknown[]).forEach((item, i) => {
      if (isRecord(item)) for (const p of queueEntryProblems(item)) issues.push({ path: ['queues', i, p.key], message: p.message });
    });
  }
  const runtime = raw['runtime'];
  const entrypoint = raw['entrypoint'];
  if (typeof entrypoint === 'string' && (RUNTIMES as readonly unknown[]).includes(runtime)) {
    const why = checkEntrypoint(runtime as Runtime, entrypoint);
    if (why !== undefined) issues.push({ path: ['entrypoint'], message: why });
  }
  if (isRecord(raw['scale'])) {
    for (const p of scaleProblems(raw['scale'], caps.maxReplicas)) issues.push({ path: ['scale', p.key], message: p.message });
  }
  return issues;
}

/** [index, index of the first use, value] for every string value an earlier item already had. */
function repeats(list: unknown, key: (item: unknown) => unknown): Array<[number, number, string]> {
  if (!Array.isArray(list)) return [];
  const seen = new Map<string, number>();
  const out: Array<[number, number, string]> = [];
  (list as unknown[]).forEach((item, i) => {
    const value = key(item);
    if (typeof value !== 'string') return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, i);
    else out.push([i, first, value]);
  });
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
