// spec.interval is a Go-style duration (`1m`, `30s`, `1h30m`, `500ms`), as the CRD's pattern allows.
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function parseInterval(text: string | undefined, fallbackMs = 60_000): number {
  if (!text) return fallbackMs;
  let total = 0;
  let matched = '';
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) {
    total += Number(m[1]) * (UNITS[m[2] ?? ''] ?? 0);
    matched += m[0];
  }
  return matched === text && total > 0 ? Math.round(total) : fallbackMs;
}

/**
 * How long a repository waits between syncs: spec.interval, but never less than the floor (issue 11
 * item 5: `interval: 1ms` would otherwise be a tight loop of Secret read, ls-remote and status write).
 */
export function syncInterval(text: string | undefined, floorMs: number): number {
  return Math.max(parseInterval(text), floorMs);
}
