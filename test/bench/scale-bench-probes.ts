// What the scale benchmarks read from a running controller process: its work-queue depth, its API
// requests and its event-loop delay (from /metrics), and when given log lines appeared (pino's JSON `time`).
import type { ControllerProcess } from './controller-bench-kit.ts';

async function metrics(c: ControllerProcess): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`);
  return res.text();
}

/** Values of every sample of `name` (all label sets). */
function samples(text: string, name: string): number[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
}

/** Keys waiting or running over all work queues; Infinity while /metrics does not answer. */
export async function queueDepth(c: ControllerProcess): Promise<number> {
  try {
    const depths = samples(await metrics(c), 'sless_workqueue_depth');
    return depths.length ? depths.reduce((a, b) => a + b, 0) : Infinity;
  } catch {
    return Infinity;
  }
}

/**
 * The API requests this process sent, by `VERB resource` (sless_kube_requests_total: the controller counts
 * them at the dispatcher they all pass). Throws when /metrics does not answer.
 */
export async function kubeRequests(c: ControllerProcess): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await metrics(c)).split('\n')) {
    if (!line.startsWith('sless_kube_requests_total{')) continue;
    const labels = Object.fromEntries([...line.slice(0, line.lastIndexOf('}')).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    out.set(`${labels.verb} ${labels.resource}`, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** Repository syncs this process ran and the seconds they took in all (sless_sync_duration_seconds). */
export async function syncTotals(c: ControllerProcess): Promise<{ count: number; seconds: number; unchanged: number } | undefined> {
  try {
    const text = await metrics(c);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    return {
      count: sum(samples(text, 'sless_sync_duration_seconds_count')),
      seconds: sum(samples(text, 'sless_sync_duration_seconds_sum')),
      // Of those, the syncs that stopped after ls-remote (nothing changed since the last full sync).
      unchanged: sum(samples(text, 'sless_repository_syncs_unchanged_total')),
    };
  } catch {
    return undefined;
  }
}

/** prom-client's default event-loop delay gauges, in ms (its histogram resets at every scrape). */
export async function loopDelay(c: ControllerProcess): Promise<{ p99Ms: number; maxMs: number } | undefined> {
  try {
    const text = await metrics(c);
    const [p99] = samples(text, 'nodejs_eventloop_lag_p99_seconds');
    const [max] = samples(text, 'nodejs_eventloop_lag_max_seconds');
    if (p99 === undefined || max === undefined) return undefined;
    return { p99Ms: p99 * 1000, maxMs: max * 1000 };
  } catch {
    return undefined;
  }
}

/** The `startup.modulesLoadedMs` the controller logs with "serving on port": ms from its process start. */
export function modulesLoadedMs(lines: readonly string[]): number | undefined {
  for (const l of lines.join('').split('\n')) {
    if (!l.includes('"startup"')) continue;
    try {
      const o = JSON.parse(l) as { startup?: { modulesLoadedMs?: number } };
      if (typeof o.startup?.modulesLoadedMs === 'number') return o.startup.modulesLoadedMs;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/**
 * For each mark, ms from `since` to the first JSON log line whose msg starts with the mark's text
 * (undefined when none did). Reads what the process has logged so far.
 */
export function logTimes<K extends string>(lines: readonly string[], since: number, marks: Record<K, string>): Record<K, number | undefined> {
  const out = {} as Record<K, number | undefined>;
  const parsed = lines
    .join('')
    .split('\n')
    .flatMap((l) => {
      try {
        const o = JSON.parse(l) as { time?: number; msg?: string };
        return typeof o.time === 'number' && typeof o.msg === 'string' ? [{ time: o.time, msg: o.msg }] : [];
      } catch {
        return [];
      }
    });
  for (const [key, text] of Object.entries(marks) as Array<[K, string]>) {
    const hit = parsed.find((p) => p.msg.startsWith(text));
    out[key] = hit ? hit.time - since : undefined;
  }
  return out;
}
