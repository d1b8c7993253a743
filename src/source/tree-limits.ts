// Bounds on the shape of a repository revision (issue 31 item 1): how deep its folders nest, how long
// one path is, how big the listing of all its paths is. A commit whose one file sits 20,000 folders
// deep is 1.3 MB of git objects, yet its `git ls-tree -r -t` listing is 400 MB (each path repeats
// every folder above it) and the paths held while walking it grow the same way: without bounds the
// process runs out of memory and the leader restarts into the same sync. Every reader checks these
// while it reads (the streamed ls-tree listing, a tree walk over git, a folder or an upload), and a
// revision past one is refused as a whole with a reason that names the limit and its setting.
import type { SourceTree, TreeEntry } from './source-tree.ts';
import { joinPath } from './source-tree.ts';

export interface TreeLimits {
  /** Folders one path may nest (SLESS_MAX_TREE_DEPTH). */
  readonly maxDepth: number;
  /** UTF-8 bytes of one repository-relative path (SLESS_MAX_PATH_BYTES). */
  readonly maxPathBytes: number;
  /** Bytes of the listing of every path of a revision, as `git ls-tree -r -t` prints it (SLESS_MAX_TREE_BYTES). */
  readonly maxListingBytes: number;
}

/**
 * Real repositories stay far inside: the deepest Java package trees nest ~20 folders, PATH_MAX is 4096,
 * and the Linux kernel's whole listing is ~7 MB. 64 MiB is the memory one sync's listing may take.
 */
export const DEFAULT_TREE_LIMITS: TreeLimits = { maxDepth: 128, maxPathBytes: 4096, maxListingBytes: 64 * 1024 * 1024 };

/** The setting behind each limit, for messages and docs. */
export const TREE_LIMIT_SETTINGS = { maxDepth: 'SLESS_MAX_TREE_DEPTH', maxPathBytes: 'SLESS_MAX_PATH_BYTES', maxListingBytes: 'SLESS_MAX_TREE_BYTES' } as const;

export const TREE_LIMIT_REASONS = ['TreeTooDeep', 'PathTooLong', 'TreeTooLarge'] as const;
export type TreeLimitReason = (typeof TREE_LIMIT_REASONS)[number];

/** A revision past a TreeLimits bound: refused as a whole (the repository's status reason is `reason`). */
export class TreeLimitError extends Error {
  constructor(
    readonly reason: TreeLimitReason,
    message: string,
  ) {
    super(message);
    this.name = 'TreeLimitError';
  }
}

/** Bytes an entry takes in the listing: `<mode> <type> <oid>\t<path>\0`. */
const LISTING_OVERHEAD = 54;

function shown(p: string): string {
  return p.length > 80 ? `${p.slice(0, 60)}…(${Buffer.byteLength(p)} bytes)` : p;
}

/** Counts a revision's paths against the limits as a reader meets them; throws TreeLimitError. */
export class TreeBudget {
  private listed = 0;

  constructor(private readonly limits: TreeLimits = DEFAULT_TREE_LIMITS) {}

  /**
   * One path met in the listing (`depth` = its folders above, counted by the caller or here); throws
   * when it or the listing so far is past a limit.
   */
  path(p: string, pathBytes = Buffer.byteLength(p), depth?: number): void {
    const { maxDepth, maxPathBytes, maxListingBytes } = this.limits;
    if (pathBytes > maxPathBytes) {
      throw new TreeLimitError('PathTooLong', `the path ${shown(p)} is ${pathBytes} bytes long, more than the ${maxPathBytes} a path may have (${TREE_LIMIT_SETTINGS.maxPathBytes}); shorten it`);
    }
    const folders = depth ?? countSlashes(p);
    if (folders > maxDepth) {
      throw new TreeLimitError('TreeTooDeep', `${shown(p)} sits ${folders} folders deep, more than the ${maxDepth} folders a path may nest (${TREE_LIMIT_SETTINGS.maxDepth}); flatten it`);
    }
    this.listed += pathBytes + LISTING_OVERHEAD;
    if (this.listed > maxListingBytes) {
      throw new TreeLimitError('TreeTooLarge', `the listing of every path of the revision is more than the ${maxListingBytes} bytes one sync may read (${TREE_LIMIT_SETTINGS.maxListingBytes}); make the repository or spec.path smaller`);
    }
  }
}

function countSlashes(p: string): number {
  let n = 0;
  for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) n++;
  return n;
}

/**
 * `tree` with every folder it lists counted against the limits (each folder once however often it is
 * read): a walk stops at the first folder past a bound instead of reading on.
 */
export function boundedTree(tree: SourceTree, limits: TreeLimits = DEFAULT_TREE_LIMITS): SourceTree {
  const budget = new TreeBudget(limits);
  const counted = new Set<string>();
  return {
    ...(tree.revision !== undefined ? { revision: tree.revision } : {}),
    readBlob: (filePath, oid) => tree.readBlob(filePath, oid),
    async readDir(dirPath: string): Promise<readonly TreeEntry[] | undefined> {
      // A folder was counted as an entry of its parent: what it lists is counted here.
      const entries = await tree.readDir(dirPath);
      if (entries && !counted.has(dirPath)) {
        counted.add(dirPath);
        const depth = dirPath === '' ? 0 : countSlashes(dirPath) + 1;
        for (const e of entries) budget.path(joinPath(dirPath, e.name), undefined, depth);
      }
      return entries;
    },
  };
}
