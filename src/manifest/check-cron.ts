// Cron expressions run in two places: Kubernetes CronJobs (robfig/cron's standard parser) and the
// local platform (croner). Only the syntax both accept is allowed, so a schedule that validates here
// behaves the same in `sless dev` and in a cluster: five fields, or one of the descriptors below.
import { Cron } from 'croner';

const DESCRIPTORS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'] as const;

interface FieldRule {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  readonly question?: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly FieldRule[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day of month', min: 1, max: 31, question: true },
  // Month names map to 1..12, day names to 0..6 (robfig has no 7 for Sunday, croner does).
  { label: 'month', min: 1, max: 12, names: MONTHS },
  { label: 'day of week', min: 0, max: 6, names: DAYS, question: true },
];

/**
 * Answers are remembered: a repository repeats the same few expressions and zones across hundreds
 * of functions, and croner and Intl take a fraction of a millisecond per call. Bounded, so odd
 * inputs cannot grow it without end.
 */
function remembered(check: (value: string) => string | undefined): (value: string) => string | undefined {
  const answers = new Map<string, string | undefined>();
  return (value) => {
    if (answers.has(value)) return answers.get(value);
    const answer = check(value);
    if (answers.size >= 1000) answers.clear();
    answers.set(value, answer);
    return answer;
  };
}

/** Returns why `expr` is not an acceptable schedule, or undefined when it is. */
export const checkCron = remembered(checkCronOnce);

/** Returns why `zone` is not an IANA time zone name, or undefined when it is. */
export const checkTimezone = remembered(checkTimezoneOnce);

function checkCronOnce(expr: string): string | undefined {
  const trimmed = expr.trim();
  if (trimmed.startsWith('@')) {
    if (!(DESCRIPTORS as readonly string[]).includes(trimmed)) {
      return `unknown descriptor "${trimmed}"; use five fields ("0 3 * * *") or one of ${DESCRIPTORS.join(', ')}`;
    }
  } else {
    const fields = trimmed.split(/\s+/);
    if (fields.length !== 5) {
      return `"${expr}" has ${fields.length} field(s); write five: minute hour day-of-month month day-of-week (e.g. "0 3 * * *")`;
    }
    for (const [i, field] of fields.entries()) {
      const rule = FIELDS[i];
      if (rule === undefined) break;
      const why = checkField(field, rule);
      if (why !== undefined) return `${rule.label} field "${field}": ${why}`;
    }
  }
  const never = trimmed.startsWith('@') ? undefined : neverFires(trimmed.split(/\s+/));
  if (never !== undefined) return `"${expr}" never fires: ${never}`;
  let next: Date | null;
  try {
    next = new Cron(trimmed, { paused: true }).nextRun();
  } catch (error) {
    // croner recurses month by month looking for a date; one that does not exist overflows its stack.
    return `"${expr}" is not a valid cron expression: ${(error as Error).message}`;
  }
  if (next === null) return `"${expr}" never fires: no date matches it`;
  return undefined;
}

/** Days in each month, February counted in a leap year (a schedule for the 29th fires every 4 years). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Why five (already checked) fields never match a date, or undefined. Both cron implementations
 * match a day when day-of-month AND day-of-week match if either of them is `*` or `?`, else when
 * either matches (a weekday exists in every month); so a schedule never fires exactly when
 * day-of-week is unrestricted and no chosen day-of-month exists in any chosen month (`31 4,6,9,11`).
 */
function neverFires(fields: readonly string[]): string | undefined {
  const [, , dom = '*', month = '*', dow = '*'] = fields;
  if (!/^[*?]/.test(dow)) return undefined;
  const days = valuesOf(dom, FIELDS[2]);
  const months = valuesOf(month, FIELDS[3]);
  const fits = months.some((m) => days.some((d) => d <= (MONTH_DAYS[m - 1] ?? 31)));
  return fits ? undefined : `day ${dom} does not exist in month ${month}`;
}

/** Every value a checked field selects (`*`, `?`, lists, ranges, steps, names). */
function valuesOf(field: string, rule: FieldRule | undefined): number[] {
  if (rule === undefined) return [];
  const values = new Set<number>();
  for (const item of field.split(',')) {
    const [range = '*', step = '1'] = item.split('/');
    const [low = '', high] = range.split('-');
    const wild = range === '*' || range === '?';
    const from = wild ? rule.min : (valueOf(low, rule) ?? rule.min);
    // `a/s` runs from a to the field's end, as in both implementations.
    const to = wild || (high === undefined && item.includes('/')) ? rule.max : (valueOf(high ?? low, rule) ?? from);
    for (let v = from; v <= to; v += Number(step)) values.add(v);
  }
  return [...values];
}

function checkField(field: string, rule: FieldRule): string | undefined {
  for (const item of field.split(',')) {
    const [range = '', step, extra] = item.split('/');
    if (extra !== undefined) return `"${item}" has more than one "/"`;
    if (step !== undefined && !/^[1-9][0-9]*$/.test(step)) return `step "${step}" must be a positive number`;
    if (range === '*') continue;
    if (range === '?') {
      if (rule.question === true && step === undefined) continue;
      return `"?" is allowed only alone in the day-of-month and day-of-week fields`;
    }
    const bounds = range.split('-');
    if (bounds.length > 2) return `"${range}" is not a value or a range a-b`;
    const values: number[] = [];
    for (const bound of bounds) {
      const value = valueOf(bound, rule);
      if (value === undefined) {
        const names = rule.names === undefined ? '' : ` or a name (${rule.names[0]}..${rule.names.at(-1)})`;
        const unsupported = /[LW#]/.test(bound) && !rule.names?.some((n) => bound.toUpperCase() === n);
        const hint = unsupported ? '; L, W and # are not supported by Kubernetes CronJobs' : '';
        return `"${bound}" is not a number ${rule.min}..${rule.max}${names}${hint}`;
      }
      values.push(value);
    }
    const [from, to] = values;
    if (from !== undefined && to !== undefined && from > to) return `range "${range}" runs backwards`;
  }
  return undefined;
}

function valueOf(token: string, rule: FieldRule): number | undefined {
  if (/^[0-9]+$/.test(token)) {
    const n = Number(token);
    return n >= rule.min && n <= rule.max ? n : undefined;
  }
  const index = rule.names?.indexOf(token.toUpperCase()) ?? -1;
  if (index < 0) return undefined;
  return rule.label === 'month' ? index + 1 : index;
}

function checkTimezoneOnce(zone: string): string | undefined {
  // Intl also takes offsets such as "+03:00", which Kubernetes' CronJob.spec.timeZone refuses.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) {
    return `"${zone}" is not an IANA time zone name such as "Europe/Moscow" or "UTC"`;
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return `unknown time zone "${zone}"; use an IANA name such as "Europe/Moscow" or "UTC"`;
  }
  return undefined;
}
