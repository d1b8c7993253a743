// A function's `scale:` (issue 29): how many replicas (pods, or processes in `sless dev`) it may have
// and when. The one source of its defaults and rules, shared by function.yaml, /v1, the Function CRD
// and both platforms. What is stored is what the user wrote (`ScaleInput`): a defaulted field follows
// the defaults (a concurrency left out follows the runtime), and `resolveScale` fills them in where a
// decision needs numbers.
import type { Runtime, ScaleInput } from './types.ts';

/** `scale:` with every default filled in. */
export interface Scale {
  readonly min: number;
  readonly max: number;
  readonly concurrency: number;
  readonly idle: string;
  readonly idleMs: number;
}

/** min 1 keeps today's behaviour (one replica for ever) for every function that does not say. */
export const SCALE_DEFAULTS = { min: 1, max: 10, idle: '5m' } as const;

/**
 * Target in-flight requests per replica when `concurrency` is left out. Node.js and Go serve
 * concurrently in one process; the Python runtime serves each request on a thread, but the GIL lets
 * only one of them compute at a time, so a Python replica takes fewer before another one pays.
 */
export const DEFAULT_CONCURRENCY: Readonly<Record<Runtime, number>> = {
  nodejs20: 50,
  nodejs22: 50,
  'go1.23': 50,
  'python3.11': 10,
  'python3.12': 10,
};

export const SCALE_LIMITS = {
  /** Hard bounds of the fields themselves (the namespace cap below lowers `max` further). */
  maxReplicas: 1000,
  maxConcurrency: 10_000,
  /** Shorter than this and a function would flap between zero and one under sparse traffic. */
  idleFloorMs: 10_000,
  idleCeilingMs: 24 * 3_600_000,
  /** Default of the namespace cap (setting SLESS_MAX_REPLICAS): no function may ask for more. */
  defaultCap: 20,
} as const;

const IDLE = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** "5m", "90s", "1h30m" in milliseconds; undefined when `text` is no such duration. */
export function parseIdle(text: string): number | undefined {
  const m = IDLE.exec(text.trim());
  if (!m || text.trim() === '') return undefined;
  const [h, min, s] = [m[1], m[2], m[3]].map((v) => Number(v ?? 0)) as [number, number, number];
  return ((h * 60 + min) * 60 + s) * 1000;
}

/** One problem with a `scale:`; `key` is the field under `scale` ('' for the whole mapping). */
export interface ScaleProblem {
  readonly key: 'min' | 'max' | 'concurrency' | 'idle';
  readonly message: string;
}

/**
 * Every rule a `scale:` must keep, in a user's words. Checks values of the right type only (the
 * schema words wrong types); `cap` is the namespace cap (SLESS_MAX_REPLICAS).
 */
export function scaleProblems(input: Readonly<Record<string, unknown>>, cap: number = SCALE_LIMITS.defaultCap): ScaleProblem[] {
  const problems: ScaleProblem[] = [];
  const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
  const { min, max, concurrency, idle } = input;
  if (int(min) && (min < 0 || min > SCALE_LIMITS.maxReplicas)) {
    problems.push({ key: 'min', message: `must be from 0 to ${SCALE_LIMITS.maxReplicas} (0 scales to zero when idle)` });
  }
  if (int(max)) {
    if (max < 1) problems.push({ key: 'max', message: 'must be at least 1' });
    else if (max > cap) problems.push({ key: 'max', message: `${max} is over this namespace's cap of ${cap} replicas (SLESS_MAX_REPLICAS)` });
  }
  if (int(min) && min > Math.min(int(max) ? max : SCALE_DEFAULTS.max, cap) && min <= SCALE_LIMITS.maxReplicas) {
    const bound = int(max) ? `max (${max})` : `the default max (${Math.min(SCALE_DEFAULTS.max, cap)})`;
    problems.push({ key: 'min', message: `min (${min}) is above ${bound}; raise max or lower min` });
  }
  if (int(concurrency) && (concurrency < 1 || concurrency > SCALE_LIMITS.maxConcurrency)) {
    problems.push({ key: 'concurrency', message: `must be from 1 to ${SCALE_LIMITS.maxConcurrency} requests in flight per replica` });
  }
  if (typeof idle === 'string') {
    const ms = parseIdle(idle);
    if (ms === undefined) problems.push({ key: 'idle', message: `"${idle}" is not a duration like 30s, 5m or 1h30m` });
    else if (ms < SCALE_LIMITS.idleFloorMs) problems.push({ key: 'idle', message: `${idle} is below the floor of 10s` });
    else if (ms > SCALE_LIMITS.idleCeilingMs) problems.push({ key: 'idle', message: `${idle} is above the ceiling of 24h` });
  }
  return problems;
}

/** The scale a function runs with: its input over the defaults (max never above the cap). */
export function resolveScale(input: ScaleInput | undefined, runtime: Runtime, cap: number = SCALE_LIMITS.defaultCap): Scale {
  const idle = input?.idle ?? SCALE_DEFAULTS.idle;
  const max = input?.max ?? Math.min(SCALE_DEFAULTS.max, cap);
  return {
    min: Math.min(input?.min ?? SCALE_DEFAULTS.min, max),
    max,
    concurrency: input?.concurrency ?? DEFAULT_CONCURRENCY[runtime],
    idle,
    idleMs: parseIdle(idle) ?? (parseIdle(SCALE_DEFAULTS.idle) as number),
  };
}

/** The written fields only (no undefined keys), so equal inputs compare and serialise equal. */
export function compactScale(input: ScaleInput | undefined): ScaleInput | undefined {
  if (!input) return undefined;
  const out: { min?: number; max?: number; concurrency?: number; idle?: string } = {};
  if (input.min !== undefined) out.min = input.min;
  if (input.max !== undefined) out.max = input.max;
  if (input.concurrency !== undefined) out.concurrency = input.concurrency;
  if (input.idle !== undefined) out.idle = input.idle;
  return Object.keys(out).length === 0 ? undefined : out;
}
