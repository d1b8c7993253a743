// The series of a compact metric (compact-counter.ts, compact-histogram.ts), one per label set, keyed by
// the label values in the metric's label order. Each series keeps its own copy of its labels.
export class LabelSeries<L extends string, S extends { readonly labels: Readonly<Record<L, string>> }> {
  readonly #byKey = new Map<string, S>();

  constructor(
    private readonly labelNames: readonly L[],
    private readonly create: (labels: Readonly<Record<L, string>>) => S,
  ) {}

  /** The series of `labels`, made on first use. */
  of(labels: Readonly<Record<L, string>>): S {
    const key = this.keyOf(labels);
    let s = this.#byKey.get(key);
    if (!s) {
      s = this.create(Object.fromEntries(this.labelNames.map((l) => [l, labels[l]])) as Record<L, string>);
      this.#byKey.set(key, s);
    }
    return s;
  }

  delete(labels: Readonly<Record<L, string>>): void {
    this.#byKey.delete(this.keyOf(labels));
  }

  clear(): void {
    this.#byKey.clear();
  }

  values(): IterableIterator<S> {
    return this.#byKey.values();
  }

  private keyOf(labels: Readonly<Record<L, string>>): string {
    return this.labelNames.map((l) => `${labels[l] ?? ''}`).join('\u0000');
  }
}
