// A controller process killed (SIGKILL) in the middle of a build, then started again: the new process
// adopts the running kaniko Job (same deterministic name), starts no second one, and finishes the build.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { conditionOf, DIGEST_A, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

function startChild(kit: Kit): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'kube-controller-child.ts')], {
    env: {
      ...process.env,
      SLESS_TEST_CHILD_OPTIONS: JSON.stringify({ kubeconfig: process.env.SLESS_TEST_KUBECONFIG, namespace: kit.ns, settings: kit.settings }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (d: Buffer) => kit.logs.push(d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`controller process exited early (${code}): ${kit.logs.join('')}`)));
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('kube controller: killed mid-build', () => {
  let kit: Kit;
  const children: ChildProcess[] = [];
  before(async () => {
    kit = await setupKit('kube-kill');
    await kit.clone.write(nodeFunction('sturdy'));
    await kit.clone.commitAndPush('one function');
    await kit.createRepository('kill');
  });
  after(async () => {
    for (const c of children) await kill(c);
    await kit?.dispose();
  });

  it('starts no duplicate build after a SIGKILL and completes the build it finds', async () => {
    children.push(await startChild(kit));
    const [job] = await eventually(async () => {
      const jobs = await kit.buildJobs('sturdy');
      assert.equal(jobs.length, 1);
      return jobs;
    }, { timeoutMs: 30_000 });
    await eventually(async () => assert.equal((await kit.getFunction('sturdy'))?.status?.phase, 'Building'));
    await kill(children[0]!);

    children.push(await startChild(kit));
    await new Promise((r) => setTimeout(r, 2_000));
    const jobs = await kit.buildJobs('sturdy');
    assert.deepEqual(jobs.map((j) => j.metadata?.uid), [job!.metadata?.uid], 'the same single build Job');

    await markJobSucceeded(kit.kc, kit.buildNs, job!.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serve('sturdy');
    await eventually(async () => {
      const fn = await kit.getFunction('sturdy');
      assert.equal(fn?.status?.phase, 'Ready', JSON.stringify(fn?.status));
      assert.equal(conditionOf(fn)?.status, 'True');
      assert.ok(fn?.status?.imageRef?.endsWith(DIGEST_A));
    }, { timeoutMs: 30_000 });
    assert.equal((await kit.buildJobs('sturdy')).length, 1);
  });
});
