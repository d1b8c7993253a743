// Issue 31 item 5 against the real API server and git server: a namespace holds at most
// SLESS_MAX_SCHEDULES_PER_NAMESPACE cron schedules and SLESS_MAX_JOBS_PER_NAMESPACE jobs, git-made and
// /v1-made together (each is a CronJob or a Job, outside the build and sync shares otherwise).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PlatformError } from '../../src/platform/types.ts';
import { eventually } from '../helpers/kube.ts';
import { conditionOf, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';
import { platformSettings, setupPlatformKit, testS3Store, type PlatformKit } from './kube-platform-kit.ts';

const every = (n: number, what: 'schedules' | 'jobs') =>
  what === 'schedules'
    ? `schedules:\n${Array.from({ length: n }, (_, i) => `  - {name: s${i}, cron: "0 ${i} * * *"}`).join('\n')}\n`
    : `jobs:\n${Array.from({ length: n }, (_, i) => `  - {name: j${i}, run_id: 1}`).join('\n')}\n`;

describe('per-namespace caps on schedules and jobs', () => {
  let kit: Kit;
  let pkit: PlatformKit;
  const limits = { schedulesPerNamespace: 3, jobsPerNamespace: 3 };
  before(async () => {
    kit = await setupKit('kube-sched-cap', undefined, { limits });
    await kit.clone.write({ ...nodeFunction('one', { yaml: every(2, 'schedules') }), ...nodeFunction('two', { yaml: every(2, 'schedules') }) });
    await kit.clone.commitAndPush('four schedules in a namespace that may hold three');
    await kit.startController();
    pkit = await setupPlatformKit('v1-sched-cap', { settings: platformSettings(testS3Store(), { limits }) });
  });
  after(async () => {
    await kit?.dispose();
    await pkit?.dispose();
  });

  it('stalls a sync that would take the namespace past the schedule cap: NamespaceQuotaExceeded, nothing applied', async () => {
    await kit.createRepository('crons');
    const repo = await eventually(async () => {
      const r = await kit.getRepository('crons');
      assert.equal(conditionOf(r, 'Stalled')?.reason, 'NamespaceQuotaExceeded', JSON.stringify(r.status?.conditions));
      return r;
    });
    assert.match(conditionOf(repo, 'Stalled')?.message ?? '', /would hold 4 schedules, more than the 3 .*SLESS_MAX_SCHEDULES_PER_NAMESPACE/);
    assert.equal((await kit.listFunctions()).length, 0);
  });

  it('refuses a /v1 cron trigger and a job past the caps (quota_exceeded, 403)', async () => {
    const ns = pkit.ns;
    await pkit.platform.createFunction(ns, { name: 'f', runtime: 'nodejs20' });
    for (let i = 0; i < 3; i++) {
      await pkit.platform.createTrigger(ns, { name: `c${i}`, type: 'cron', functionRef: 'f', schedule: '0 3 * * *' });
      await pkit.platform.createJob(ns, { name: `j${i}`, functionRef: 'f' });
    }
    // An http trigger is no CronJob: not counted.
    await pkit.platform.createTrigger(ns, { name: 'web', type: 'http', functionRef: 'f' });
    const quota = (re: RegExp) => (err: unknown) => err instanceof PlatformError && err.code === 'quota_exceeded' && re.test(err.message);
    await assert.rejects(pkit.platform.createTrigger(ns, { name: 'c3', type: 'cron', functionRef: 'f', schedule: '0 3 * * *' }), quota(/would hold 4 schedules, more than the 3/));
    await assert.rejects(pkit.platform.createJob(ns, { name: 'j3', functionRef: 'f' }), quota(/would hold 4 jobs, more than the 3/));
  });
});
