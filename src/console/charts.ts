// The function page's charts (issue 33): requests per minute, p50/p95 latency and error rate over the
// last hour (1-minute buckets) and the last day (1-hour buckets), from the invocation store. Pure: the
// buckets from the records, then a small SVG drawn here (no library, nothing from a CDN; the CSP
// allows no inline style, so only presentation attributes and classes) and the same numbers as a
// table for screen readers.
import type { InvocationRecord } from '../store/types.ts';

/** How many of the newest calls the charts read (the store keeps more); the page says when the day holds more. */
export const CHART_CALLS = 10_000;

export interface Bucket {
  /** Start of the bucket (ms since the epoch). */
  readonly start: number;
  readonly calls: number;
  readonly errors: number;
  /** Undefined when there were no calls. */
  readonly p50?: number;
  readonly p95?: number;
}

export interface Window {
  readonly id: 'hour' | 'day';
  readonly label: string;
  readonly bucketMs: number;
  readonly buckets: number;
}

export const WINDOWS: readonly Window[] = [
  { id: 'hour', label: 'last hour', bucketMs: 60_000, buckets: 60 },
  { id: 'day', label: 'last day', bucketMs: 3_600_000, buckets: 24 },
];

/** The value at quantile q (0..1) of sorted numbers, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** Calls per bucket, the last `window.buckets` of them ending with the one that holds `nowMs`. */
export function bucketsOf(records: readonly InvocationRecord[], window: Window, nowMs: number): Bucket[] {
  const last = Math.floor(nowMs / window.bucketMs) * window.bucketMs;
  const first = last - (window.buckets - 1) * window.bucketMs;
  const durations: number[][] = Array.from({ length: window.buckets }, () => []);
  const errors = new Array<number>(window.buckets).fill(0);
  for (const r of records) {
    const at = Date.parse(r.startedAt);
    if (Number.isNaN(at) || at < first || at >= last + window.bucketMs) continue;
    const i = Math.floor((at - first) / window.bucketMs);
    durations[i]?.push(r.durationMs);
    if (r.status >= 500) errors[i] = (errors[i] ?? 0) + 1;
  }
  return durations.map((d, i) => {
    const sorted = d.sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5);
    const p95 = quantile(sorted, 0.95);
    return { start: first + i * window.bucketMs, calls: d.length, errors: errors[i] ?? 0, ...(p50 === undefined ? {} : { p50, p95 }) };
  });
}

export interface Series {
  readonly name: string;
  /** One value per bucket; undefined: no data there (a gap in the line). */
  readonly values: readonly (number | undefined)[];
}

export interface Chart {
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  readonly series: readonly Series[];
  /** Row labels of the table (bucket times). */
  readonly labels: readonly string[];
  readonly svg: string;
  /** What the chart says in one sentence (the SVG's accessible description). */
  readonly summary: string;
}

const W = 360;
const H = 120;
const PAD = { left: 40, right: 8, top: 8, bottom: 20 };

const round = (n: number) => (Math.abs(n) >= 10 ? Math.round(n) : Math.round(n * 100) / 100);

function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A line chart of the series over the buckets: axes, the maximum as the y label, one polyline per run of values. */
export function svgOf(id: string, title: string, summary: string, series: readonly Series[], firstLabel: string, lastLabel: string): string {
  const count = Math.max(1, ...series.map((s) => s.values.length));
  const max = Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)));
  const top = max === 0 ? 1 : max;
  const x = (i: number) => PAD.left + (count === 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (count - 1));
  const y = (v: number) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const lines = series.map((s, n) => {
    const runs: string[][] = [[]];
    s.values.forEach((v, i) => {
      if (v === undefined) runs.push([]);
      else runs[runs.length - 1]?.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    });
    return runs
      .filter((r) => r.length > 0)
      .map((r) => (r.length === 1 ? `<circle class="series-${n}" cx="${r[0]?.split(',')[0]}" cy="${r[0]?.split(',')[1]}" r="2"/>` : `<polyline class="series-${n}" fill="none" points="${r.join(' ')}"/>`))
      .join('');
  });
  const legend = series.length > 1 ? series.map((s, n) => `<text class="legend series-${n}-text" x="${W - PAD.right - 60 * (series.length - n)}" y="${PAD.top + 8}">${escapeXml(s.name)}</text>`).join('') : '';
  return [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-labelledby="${id}-t ${id}-d" xmlns="http://www.w3.org/2000/svg">`,
    `<title id="${id}-t">${escapeXml(title)}</title><desc id="${id}-d">${escapeXml(summary)}</desc>`,
    `<line class="axis" x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}"/>`,
    `<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}"/>`,
    `<text class="tick" x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end">${round(max)}</text>`,
    `<text class="tick" x="${PAD.left - 4}" y="${H - PAD.bottom}" text-anchor="end">0</text>`,
    `<text class="tick" x="${PAD.left}" y="${H - 4}">${escapeXml(firstLabel)}</text>`,
    `<text class="tick" x="${W - PAD.right}" y="${H - 4}" text-anchor="end">${escapeXml(lastLabel)}</text>`,
    legend,
    ...lines,
    '</svg>',
  ].join('');
}

function timeLabel(ms: number, window: Window): string {
  const iso = new Date(ms).toISOString();
  return window.id === 'hour' ? iso.slice(11, 16) : `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
}

/** The three charts of one window. */
export function chartsOf(records: readonly InvocationRecord[], window: Window, nowMs: number): Chart[] {
  const buckets = bucketsOf(records, window, nowMs);
  const labels = buckets.map((b) => timeLabel(b.start, window));
  const minutes = window.bucketMs / 60_000;
  const first = labels[0] ?? '';
  const last = `${labels.at(-1) ?? ''} UTC`;
  const total = buckets.reduce((n, b) => n + b.calls, 0);
  const errors = buckets.reduce((n, b) => n + b.errors, 0);
  const rate: Series = { name: 'requests/min', values: buckets.map((b) => round(b.calls / minutes)) };
  const p50: Series = { name: 'p50', values: buckets.map((b) => b.p50) };
  const p95: Series = { name: 'p95', values: buckets.map((b) => b.p95) };
  const errorRate: Series = { name: 'errors %', values: buckets.map((b) => (b.calls === 0 ? undefined : round((100 * b.errors) / b.calls))) };
  const worstP95 = Math.max(0, ...buckets.map((b) => b.p95 ?? 0));
  const make = (key: string, title: string, unit: string, series: Series[], summary: string): Chart => {
    const id = `chart-${window.id}-${key}`;
    return { id, title: `${title}, ${window.label}`, unit, series, labels, summary, svg: svgOf(id, `${title}, ${window.label}`, summary, series, first, last) };
  };
  return [
    make('rate', 'Requests per minute', 'requests/min', [rate], `${total} calls in the ${window.label}, at most ${round(Math.max(0, ...(rate.values as number[])))} per minute.`),
    make('latency', 'Latency p50 and p95', 'ms', [p50, p95], total === 0 ? `No calls in the ${window.label}.` : `The slowest ${window.id === 'hour' ? 'minute' : 'hour'} had a p95 of ${round(worstP95)} ms.`),
    make('errors', 'Error rate (5xx)', '%', [errorRate], `${errors} of ${total} calls answered 5xx in the ${window.label}.`),
  ];
}
