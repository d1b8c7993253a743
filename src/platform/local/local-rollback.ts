// `sless dev`'s revisions and rollback (issue 33, docs/rollback.md): a pin kept with the function in
// state.json; rolling back or undoing redeploys from the kept prepared folder, with no build.
import { revisionRecord, rollbackTarget } from '../revisions.ts';
import { PlatformError, type RevisionRecord } from '../types.ts';
import type { FunctionTable } from './function-table.ts';
import { notFound } from './jobs-and-schedules.ts';
import type { LocalDeployer } from './local-deployer.ts';
import type { LocalState, StoredFunction } from './local-state.ts';

export interface LocalRollbackDeps {
  readonly table: FunctionTable;
  readonly state: LocalState;
  readonly deployer: LocalDeployer;
  readonly now?: () => Date;
}

export class LocalRollback {
  constructor(private readonly deps: LocalRollbackDeps) {}

  listRevisions(namespace: string, name: string): RevisionRecord[] {
    return (this.stored(namespace, name).revisions ?? []).map(revisionRecord);
  }

  /** Pins the function and serves the revision from its kept folder before answering (no build). */
  async rollback(namespace: string, name: string, revision?: number): Promise<void> {
    const f = this.stored(namespace, name);
    const target = rollbackTarget(name, f.revisions ?? [], revision);
    if (!target.ok) throw new PlatformError('invalid', target.message);
    const since = (this.deps.now?.() ?? new Date()).toISOString();
    this.deps.table.put({ ...f, pinned: { revision: target.revision.revision, since } });
    await this.deps.state.save();
    await this.deps.deployer.deploy(this.stored(namespace, name));
  }

  /** Removes the pin and serves the function's own version again (prepared while it was pinned). */
  async undo(namespace: string, name: string): Promise<void> {
    const { pinned, ...f } = this.stored(namespace, name);
    if (!pinned) return;
    this.deps.table.put(f);
    await this.deps.state.save();
    await this.deps.deployer.deploy(this.stored(namespace, name));
  }

  private stored(namespace: string, name: string): StoredFunction {
    const f = this.deps.table.get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    return f;
  }
}
