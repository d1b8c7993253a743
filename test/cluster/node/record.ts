// The machine-wide record of the running node: what was started and changed, so that whoever
// stops it (the test service, `npm run cluster:down`, or the next start after a crash) undoes
// exactly that. One node at a time: the lock (lock.ts) guards the record.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClusterProcess } from '../processes.ts';
import type { NodePaths } from './plan.ts';

export const NODE_RUN_DIR = '/run/sless-test-node';
export const NODE_LOCK_FILE = '/run/lock/sless-test-node.lock';
const RECORD_FILE = path.join(NODE_RUN_DIR, 'node.json');

export interface NodeRecord {
  readonly paths: NodePaths;
  /** In start order; the lock holder first, stopped last. */
  readonly processes: ClusterProcess[];
  /** Values before the start of the kernel settings the node changes. */
  readonly sysctls: Record<string, string>;
  /** /run/netns entries before the start (the rest are the pods'). */
  readonly netnsBefore: string[];
  /** Global folders that did not exist before the start. */
  readonly createdGlobals: string[];
  bridgeCreated: boolean;
  /** For teardown: crictl (sandboxes) and kube-proxy (--cleanup). */
  readonly binaries: { readonly crictl: string; readonly kubeProxy: string };
  /** Who started it, for the lock's error message. */
  readonly owner: { readonly pid: number; readonly startedAt: string; readonly command: string };
}

export async function writeRecord(record: NodeRecord): Promise<void> {
  await mkdir(NODE_RUN_DIR, { recursive: true });
  await writeFile(`${RECORD_FILE}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  await rename(`${RECORD_FILE}.tmp`, RECORD_FILE);
}

export async function readRecord(): Promise<NodeRecord | undefined> {
  try {
    return JSON.parse(await readFile(RECORD_FILE, 'utf8')) as NodeRecord;
  } catch {
    return undefined;
  }
}

export async function removeRecord(): Promise<void> {
  await rm(RECORD_FILE, { force: true });
}
