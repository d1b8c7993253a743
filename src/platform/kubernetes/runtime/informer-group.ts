// Several informers of one kind (one per namespace when the controller is namespace-scoped, so namespaced
// RBAC suffices) read as one cache.
import type { KubernetesObject } from '@kubernetes/client-node';
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

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}
