// The functions of `sless dev` as state.json holds them, by namespace and name.
import type { FunctionRecord } from '../types.ts';
import { stateKey, type LocalState, type StoredFunction } from './local-state.ts';

export class FunctionTable {
  constructor(private readonly state: LocalState) {}

  get(namespace: string, name: string): StoredFunction | undefined {
    return this.state.data.functions[stateKey(namespace, name)];
  }

  put(f: StoredFunction): void {
    this.state.data.functions[stateKey(f.record.namespace, f.record.name)] = f;
  }

  /** Changes fields of a function's record (and of its stored entry); nothing when it is gone. */
  patch(namespace: string, name: string, patch: Partial<FunctionRecord>, extra: Partial<StoredFunction> = {}): void {
    const f = this.get(namespace, name);
    if (!f) return;
    this.put({ ...f, ...extra, record: { ...f.record, ...patch } });
  }

  delete(namespace: string, name: string): void {
    delete this.state.data.functions[stateKey(namespace, name)];
  }

  all(): StoredFunction[] {
    return Object.values(this.state.data.functions);
  }

  /** The records of a namespace, sorted by name. */
  inNamespace(namespace: string): FunctionRecord[] {
    return this.all()
      .filter((f) => f.record.namespace === namespace)
      .map((f) => f.record)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
