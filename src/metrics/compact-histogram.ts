// A labelled histogram that keeps each series in a few numbers. prom-client's Histogram keeps a series'
// buckets in an object keyed by their bounds: integer bounds are array indices to V8, so the bounds of
// build times (1 ... 1200 s) gave every series a 1,201-slot backing array, ~15 KB: 14.8 MB of a
// controller's heap for 1,000 functions' build durations. Same text in /metrics as prom-client's.
import type { Metric, Registry } from 'prom-client';
import { LabelSeries } from './label-series.ts';

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

/** One series, held by a caller that observes it often (/fn: once per call), so no label lookup per value. */
export interface HistogramSeries {
  observe(value: number): void;
}

export class CompactHistogram<L extends string> implements LabeledHistogram<L> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: LabelSeries<L, Series<L>>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    private readonly upperBounds: readonly number[],
    registers: readonly Registry[],
  ) {
    this.series = new LabelSeries(labelNames, (labels) => ({ labels, counts: new Float64Array(upperBounds.length), sum: 0, count: 0 }));
    for (const r of registers) r.registerMetric(this as unknown as Metric);
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    this.record(this.series.of(labels), value);
  }

  /**
   * The series of `labels`, to observe without finding it again. It stays the one printed until
   * `remove` (or `reset`) drops it; a handle kept past that counts into nothing, so its holder drops it too.
   */
  child(labels: Readonly<Record<L, string>>): HistogramSeries {
    const s = this.series.of(labels);
    return { observe: (value) => this.record(s, value) };
  }

  remove(labels: Readonly<Record<L, string>>): void {
    this.series.delete(labels);
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

  private record(s: Series<L>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        s.counts[i]! += 1;
        break;
      }
    }
    s.sum += value;
    s.count += 1;
  }

}
