// The names of what a function's schedules and jobs become, the same on every platform: schedule `s`
// of function `f` is the cron trigger `f-cron-s`, its http trigger `f-http`, job `j` the job `f-j`.
// (The Kubernetes names came first and objects in clusters carry them; `sless dev` used `f-s` for
// schedules before and takes over what it stored under that name.)
import { createHash } from 'node:crypto';

/**
 * A DNS-1123 label (<= max chars) made of `parts` joined by '-'. When too long, the joined name is cut and
 * a short hash of the full name is appended, so distinct inputs stay distinct and the result is stable.
 */
export function dnsLabel(parts: readonly string[], max = 63): string {
  const full = parts.join('-').toLowerCase();
  if (full.length <= max) return full;
  const hash = shortHash(full, 8);
  return `${full.slice(0, max - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}

export function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

export function httpTriggerName(fn: string): string {
  return dnsLabel([fn, 'http']);
}

export function cronTriggerName(fn: string, schedule: string): string {
  return dnsLabel([fn, 'cron', schedule]);
}

export function queueTriggerName(fn: string, trigger: string): string {
  return dnsLabel([fn, 'queue', trigger]);
}

export function functionJobName(fn: string, job: string): string {
  return dnsLabel([fn, job]);
}

/** What `sless dev` named a schedule's trigger before the names were shared (read once, to carry state over). */
export function legacyDevTriggerName(fn: string, schedule: string): string {
  return `${fn}-${schedule}`;
}
