// One `sless dev` per data dir: two on the same state.json would both run every schedule and job
// and overwrite each other's state. The lock is <data-dir>/sless-dev.pid, created exclusively with
// our pid; a second start finds it, sees that pid alive and refuses, naming it. A lock left by a
// process that is gone (killed with SIGKILL, machine rebooted) is taken over.
import { readFileSync, unlinkSync } from 'node:fs';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';

export const LOCK_FILE = 'sless-dev.pid';

export interface DataDirLock {
  readonly file: string;
  /** Removes the lock if it is still ours (synchronous: also safe in a process 'exit' handler). */
  release(): void;
}

/** Whether `pid` runs a process that could be a sless dev (alive, and not a reused pid of something else). */
function holderAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return /sless/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return true; // no /proc: alive is all we know
  }
}

export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        file,
        release() {
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (holderAlive(holder)) {
      throw new Error(
        `another sless dev (pid ${holder}) is using the data dir ${dataDir}; stop it first, or give this one its own --data-dir`,
      );
    }
    await unlink(file).catch(() => undefined); // stale: its process is gone
  }
  throw new Error(`cannot take the lock ${file}; another sless dev keeps starting on this data dir`);
}
