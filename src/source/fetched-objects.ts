// What an in-process fetch brought (git-wire-fetch.ts, pack-index.ts), kept in memory for the sync
// that follows it: the trees go into the TreeMemo (the snapshot reads no tree from disk), the commit's
// root tree saves reading the commit, small blobs are handed out without a read, and the raw trees
// stay until the next fetch, whose thin pack names them as its delta bases.
import type { TreeMemo } from './git-tree.ts';
import { parseTreeObject } from './git-tree.ts';
import type { PackBase } from './pack-index.ts';

/** Blobs up to this size, and at most this many bytes of them in all, are kept. */
const BLOB_MAX_BYTES = 64 * 1024;
const BLOBS_MAX_TOTAL_BYTES = 1024 * 1024;

export class FetchedObjects {
  readonly blobs = new Map<string, Buffer>();
  private readonly trees = new Map<string, Buffer>();
  readonly rootTree: string | undefined;

  constructor(
    readonly commit: string,
    objects: ReadonlyMap<string, PackBase>,
    memo: TreeMemo,
  ) {
    let blobBytes = 0;
    let rootTree: string | undefined;
    for (const [oid, o] of objects) {
      if (o.type === 'tree') {
        this.trees.set(oid, o.content);
        try {
          memo.set(oid, parseTreeObject(o.content));
        } catch {
          // Read from the cache when asked for instead.
        }
      } else if (o.type === 'blob') {
        if (o.content.length <= BLOB_MAX_BYTES && blobBytes + o.content.length <= BLOBS_MAX_TOTAL_BYTES) {
          this.blobs.set(oid, o.content);
          blobBytes += o.content.length;
        }
      } else if (oid === commit)
        rootTree = /^tree ([0-9a-f]{40})\n/.exec(o.content.toString('latin1', 0, 46))?.[1];
    }
    this.rootTree = rootTree;
  }

  /** A tree this fetch brought, as a git object (a delta base of the next fetch). */
  tree(oid: string): Buffer | undefined {
    return this.trees.get(oid);
  }

  /** Drops the blobs: kept only for the sync of this fetch. */
  dropBlobs(): void {
    this.blobs.clear();
  }
}
