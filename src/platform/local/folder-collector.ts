// The prepared folders `sless dev` keeps on disk: every function's current version and every kept
// revision's (a rollback runs it with no build), plus whatever a running or draining process or a
// deploy under way uses. The rest is deleted, so uploads and pushes do not fill the disk.
import type { FunctionTable } from './function-table.ts';
import { revisionBuildKeys } from './local-revisions.ts';
import type { Logger } from './logger.ts';
import type { FunctionPreparer } from './prepare-function.ts';

export interface FolderCollectorOptions {
  readonly table: FunctionTable;
  readonly preparer: FunctionPreparer;
  /** Folders the processes (running, draining, starting) use now. */
  readonly inUse: () => Iterable<string>;
  readonly logger: Logger;
}

export class FolderCollector {
  readonly #o: FolderCollectorOptions;
  #collecting: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(opts: FolderCollectorOptions) {
    this.#o = opts;
  }

  /** At start-up, before any process runs: keeps only what the stored functions and revisions name. */
  async pruneStored(): Promise<void> {
    const all = this.#o.table.all();
    const pruned = await this.#o.preparer.prune(new Set([...all.flatMap((f) => (f.buildKey ? [f.buildKey] : [])), ...revisionBuildKeys(all)]));
    if (pruned.length > 0) this.#o.logger.info(`removed ${pruned.length} prepared folders no function uses any more`);
  }

  /** Deletes what nothing uses any more; serialised, never fails the caller. */
  collect(): void {
    if (this.#closed) return;
    this.#collecting = this.#collecting
      .then(async () => {
        const all = this.#o.table.all();
        const keep = new Set([...all.flatMap((f) => (f.buildKey ? [f.buildKey] : [])), ...revisionBuildKeys(all), ...this.#o.inUse()]);
        const gone = await this.#o.preparer.prune(keep);
        if (gone.length > 0) this.#o.logger.info(`removed ${gone.length} prepared folder(s) nothing uses any more`);
      })
      .catch((err: unknown) => this.#o.logger.warn(`cleaning up prepared folders failed: ${(err as Error).message}`));
  }

  /** Stops collecting; resolves when a collection under way is done. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#collecting;
  }
}
