// Several informers of one kind (one per namespace when the controller is namespace-scoped, so namespaced
// RBAC suffices) read as one cache.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { IndexName } from './cache-index.ts';
import type { ResilientInformer } from './resilient-informer.ts';

export class InformerGroup<T extends KubernetesObject> {
  constructor(private readonly informers: ReadonlyArray<ResilientInformer<T>>) {}

  get(name: string, namespace?: string): T | undefined {
    for (const i of this.informers) {
      const found = i.get(name, namespace);
      if (found) return found;
    }
    return undefined;
  }

  list(namespace?: string): readonly T[] {
    return this.informers.flatMap((i) => i.list(namespace));
  }

  /** Objects whose `index` value is `value` (cache-index.ts). */
  byIndex(index: IndexName, value: string): readonly T[] {
    return this.informers.length === 1 ? this.informers[0]!.byIndex(index, value) : this.informers.flatMap((i) => i.byIndex(index, value));
  }

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}
