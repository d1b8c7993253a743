// Cluster processes are found again by name (teardown after a crash reads pids from a record and
// checks /proc/<pid>/cmdline before signalling, so a reused pid is left alone).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startProcess, stopProcesses } from './processes.ts';

const exitsWithin = (exited: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false))]);

describe('cluster processes', async () => {
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'sless-processes-'));
  after(() => rm(logDir, { recursive: true, force: true }));

  it('are stopped by the name they were started under', async () => {
    const p = startProcess('sleep', '/bin/sleep', logDir, ['600']);
    await stopProcesses([{ name: p.name, pid: p.pid }]);
    assert.equal(await exitsWithin(p.exited, 2_000), true, 'the process is still running');
  });

  it('refuse a name their command line does not contain, which stopProcesses would never find (the auth registry outlived every node)', () => {
    assert.throws(
      () => startProcess('docker-registry-auth', '/bin/sleep', logDir, ['600', 'registry-auth.yaml']),
      /docker-registry-auth.*command line/,
    );
  });
});
