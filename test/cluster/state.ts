// Where `npm run cluster:up` leaves its cluster for `cluster:down` and for humans: .sless-test/.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcesses, type ClusterProcess } from './processes.ts';
import { readRecord } from './node/record.ts';
import { teardownNode } from './node/teardown.ts';

export const STATE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.sless-test');
const STATE_FILE = path.join(STATE_DIR, 'cluster.json');

export interface ClusterState {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly processes: readonly ClusterProcess[];
}

export async function writeState(state: ClusterState): Promise<void> {
  await writeFile(STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
}

export async function readState(): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/** Stops the recorded cluster; returns what it stopped, or undefined when none was recorded. */
export async function stopFromState(): Promise<string[] | undefined> {
  const state = await readState();
  if (!state) return undefined;
  await stopProcesses(state.processes);
  await rm(STATE_FILE, { force: true });
  return state.processes.map((p) => `${p.name}:${p.pid}`);
}

/** Tears down the real node if `cluster:up --node` of this checkout started it, or if the process
 * that started it is gone (a node of a running test run is left to that run); returns what
 * teardown could not undo, or undefined when there was no such node. */
export async function stopOwnNode(): Promise<string[] | undefined> {
  const record = await readRecord();
  if (!record) return undefined;
  if (record.paths.dir !== STATE_DIR && alive(record.owner.pid)) return undefined;
  return teardownNode(record);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
