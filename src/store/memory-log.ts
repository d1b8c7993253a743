// In-memory logs for `sless dev` and tests: a ring buffer per function, so memory stays bounded.
import type { BuildLog, BuildRecord, InvocationLog, InvocationRecord } from './types.ts';

export class MemoryLog<T extends { namespace: string; function: string }> {
  readonly #perFunction: number;
  readonly #rings = new Map<string, T[]>();

  constructor(options: { perFunction?: number } = {}) {
    this.#perFunction = options.perFunction ?? 1000;
  }

  record(entry: T): void {
    const key = `${entry.namespace}/${entry.function}`;
    let ring = this.#rings.get(key);
    if (!ring) this.#rings.set(key, (ring = []));
    ring.push(entry);
    if (ring.length > this.#perFunction) ring.splice(0, ring.length - this.#perFunction);
  }

  list(namespace: string, fn: string, limit: number): Promise<T[]> {
    const ring = this.#rings.get(`${namespace}/${fn}`) ?? [];
    return Promise.resolve(ring.slice(-limit).reverse());
  }
}

export function createMemoryInvocationLog(options?: { perFunction?: number }): InvocationLog {
  return new MemoryLog<InvocationRecord>(options);
}

export function createMemoryBuildLog(options?: { perFunction?: number }): BuildLog {
  return new MemoryLog<BuildRecord>(options);
}
