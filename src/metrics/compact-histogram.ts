// A labelled histogram that keeps each series in a few numbers. prom-client's Histogram keeps a series'
// buckets in an object keyed by their bounds: integer bounds are array indices to V8, so the bounds of
// build times (1 ... 1200 s) gave every series a 1,201-slot backing array, ~15 KB: 14.8 MB of a
// controller's heap for 1,000 functions' build durations. Same text in /metrics as prom-client's.
import type { Metric, Registry } from 'prom-client';

interface Series<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  /** Observations per bucket (not cumulative), one per bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export interface LabeledHistogram<L extends string> {
  observe(labels: Readonly<Record<L, string>>, value: number): void;
  remove(labels: Readonly<Record<L, string>>): void;
}

export class CompactHistogram<L extends string> implements LabeledHistogram<L> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly upperBounds: readonly number[],
    registers: readonly Registry[],
  ) {
    for (const r of registers) r.registerMetric(this as unknown as Metric);
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    const key = this.keyOf(labels);
    let s = this.series.get(key);
    if (!s) {
      const own = Object.fromEntries(this.labelNames.map((l) => [l, labels[l]])) as Record<L, string>;
      s = { labels: own, counts: new Float64Array(this.upperBounds.length), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const i = this.upperBounds.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }

  remove(labels: Readonly<Record<L, string>>): void {
    this.series.delete(this.keyOf(labels));
  }

  reset(): void {
    this.series.clear();
  }

  /** In prom-client's shape (Registry formats it): per series its cumulative buckets, +Inf, sum, count. */
  get(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.upperBounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ labels: { le, ...s.labels }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  private keyOf(labels: Readonly<Record<L, string>>): string {
    return this.labelNames.map((l) => `${labels[l] ?? ''}`).join('\u0000');
  }
}
