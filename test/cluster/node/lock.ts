// One real node per machine (kubelet paths, iptables, the bridge): a flock on NODE_LOCK_FILE held
// by a small process group that lives as long as the node. The group is the first process of the
// record, so stopping the node in any way (test service, `cluster:down`, a crash cleanup)
// releases the lock last; a crashed owner releases it by dying.
import { readFile } from 'node:fs/promises';
import { startProcess, sleep, type StartedProcess } from '../processes.ts';
import { NODE_LOCK_FILE, readRecord } from './record.ts';

const LOCKED = 'sless-test-node: locked';

/** Waits up to `timeoutMs` for the machine's node lock; resolves with its holder process. */
export async function acquireNodeLock(logDir: string, timeoutMs: number): Promise<StartedProcess> {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const holder = startProcess('flock', 'flock', logDir, [
    '--exclusive',
    `--timeout=${seconds}`,
    NODE_LOCK_FILE,
    'sh',
    '-c',
    `echo '${LOCKED}'; while :; do sleep 3600; done`,
  ]);
  let exited: number | null | undefined;
  void holder.exited.then((code) => (exited = code));
  const noteAt = Date.now() + 2_000;
  let noted = false;
  for (;;) {
    const log = await readFile(holder.logPath, 'utf8').catch(() => '');
    if (log.includes(LOCKED)) return holder;
    if (exited !== undefined) {
      const owner = (await readRecord())?.owner;
      throw new Error(
        `another real node holds ${NODE_LOCK_FILE} after ${seconds} s` +
          (owner ? ` (started by pid ${owner.pid}, ${owner.command}, at ${owner.startedAt})` : '') +
          ': only one node runs per machine; stop it with `npm run cluster:down` if it is yours',
      );
    }
    if (!noted && Date.now() > noteAt) {
      noted = true;
      console.error(`[node] waiting for the machine's node lock ${NODE_LOCK_FILE} (another node runs) ...`);
    }
    await sleep(100);
  }
}
