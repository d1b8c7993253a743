// A labelled counter whose series a hot caller holds directly. prom-client's Counter validates and hashes
// the label set on every inc, even through labels() (~1.6 µs a call here): /fn counts every call, and
// that was a measurable share of the proxy's cost per request (docs/benchmarks.md). Same text in
// /metrics as prom-client's Counter of the same name and labels.
import type { Metric, Registry } from 'prom-client';
import { LabelSeries } from './label-series.ts';

interface Series<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  value: number;
}

/** One series, held by a caller that counts it often. */
export interface CounterSeries {
  inc(value?: number): void;
}

export class CompactCounter<L extends string> {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series: LabelSeries<L, Series<L>>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    registers: readonly Registry[],
  ) {
    this.series = new LabelSeries(labelNames, (labels) => ({ labels, value: 0 }));
    for (const r of registers) r.registerMetric(this as unknown as Metric);
  }

  inc(labels: Readonly<Record<L, string>>, value = 1): void {
    add(this.name, this.series.of(labels), value);
  }

  /**
   * The series of `labels`, to count without finding it again. It stays the one printed until `remove`
   * (or `reset`) drops it; a handle kept past that counts into nothing, so its holder drops it too.
   */
  child(labels: Readonly<Record<L, string>>): CounterSeries {
    const s = this.series.of(labels);
    const name = this.name;
    return { inc: (value = 1) => add(name, s, value) };
  }

  remove(labels: Readonly<Record<L, string>>): void {
    this.series.delete(labels);
  }

  reset(): void {
    this.series.clear();
  }

  /** In prom-client's shape (Registry formats it). */
  get(): { name: string; help: string; type: 'counter'; aggregator: 'sum'; values: Array<{ labels: Record<string, string>; value: number }> } {
    const values = [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

function add(name: string, s: { value: number }, value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name}: a counter only grows by a finite number: ${value}`);
  s.value += value;
}
