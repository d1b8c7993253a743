// Where `npm run cluster:up` leaves its cluster for `cluster:down` and for humans: .sless-test/.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcesses, type ClusterProcess } from './cluster.ts';

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
