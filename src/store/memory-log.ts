// In-memory logs for `sless dev` and tests: a ring buffer per function, so memory stays bounded.
import type { BuildLog, BuildRecord, InvocationLog, InvocationRecord } from './types.ts';

interface Ring<T> {
  readonly items: T[];
  /** Where the next entry goes once the ring is full (the oldest entry). */
  next: number;
}

export class MemoryLog<T extends { namespace: string; function: string }> {
  readonly #perFunction: number;
  readonly #rings = new Map<string, Ring<T>>();

  constructor(options: { perFunction?: number } = {}) {
    this.#perFunction = options.perFunction ?? 1000;
  }

  record(entry: T): void {
    const key = `${entry.namespace}/${entry.function}`;
    let ring = this.#rings.get(key);
    if (!ring) this.#rings.set(key, (ring = { items: [], next: 0 }));
    if (ring.items.length < this.#perFunction) {
      ring.items.push(entry);
    } else {
      ring.items[ring.next] = entry;
      ring.next = (ring.next + 1) % this.#perFunction;
    }
  }

  list(namespace: string, fn: string, limit: number): Promise<T[]> {
    const ring = this.#rings.get(`${namespace}/${fn}`);
    if (!ring) return Promise.resolve([]);
    const ordered = [...ring.items.slice(ring.next), ...ring.items.slice(0, ring.next)];
    return Promise.resolve(ordered.slice(-limit).reverse());
  }
}

export function createMemoryInvocationLog(options?: { perFunction?: number }): InvocationLog {
  return new MemoryLog<InvocationRecord>(options);
}

export function createMemoryBuildLog(options?: { perFunction?: number }): BuildLog {
  return new MemoryLog<BuildRecord>(options);
}
