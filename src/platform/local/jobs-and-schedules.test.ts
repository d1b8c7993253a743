import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import type { FunctionManifest } from '../../manifest/types.ts';
import { checkCron } from '../../manifest/check-cron.ts';
import { cronTriggerName } from '../../manifest/generated-names.ts';
import { PlatformError } from '../types.ts';
import { ChildGroup } from './child-group.ts';
import { JobsAndSchedules } from './jobs-and-schedules.ts';
import { LocalState } from './local-state.ts';
import { silentLogger } from './logger.ts';

// Stands in for a runtime in job mode: sums SLESS_EVENT's input and prints the result as JSON.
const SUM = `const e = JSON.parse(process.env.SLESS_EVENT); console.log(JSON.stringify({ sum: (e.input || []).reduce((a, b) => a + b, 0) }));`;

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function setup() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-jobs-'));
  dirs.push(dir);
  const state = new LocalState(dir);
  const background: Promise<unknown>[] = [];
  let runs = 0;
  const jobs = new JobsAndSchedules({
    state,
    children: new ChildGroup(),
    logger: silentLogger,
    managedBy: 'git:local',
    repoName: 'local',
    repoDisplayUrl: 'http://git.example/functions.git',
    commandOf: (_ns, fn) => {
      if (fn !== 'summer') return { missing: `function ${fn} has no built code yet` };
      runs++;
      return { command: { command: process.execPath, args: ['-e', SUM], cwd: dir, env: { PATH: process.env.PATH ?? '' } }, timeoutSec: 10 };
    },
    functionExists: (_ns, fn) => fn === 'summer',
    url: (ns, fn) => `http://localhost:8080/fn/${ns}/${fn}`,
    track: (p) => void background.push(p),
  });
  const settle = async () => {
    while (background.length) await background.shift();
  };
  return { state, jobs, settle, runs: () => runs };
}

function manifest(jobs: FunctionManifest['jobs'], schedules: FunctionManifest['schedules'] = []): FunctionManifest {
  return {
    name: 'summer',
    runtime: 'nodejs20',
    entrypoint: 'handler.handle',
    memoryMb: 128,
    timeoutSec: 30,
    env: {},
    envFromSecrets: [],
    include: [],
    ignore: [],
    http: { enabled: true },
    schedules,
    jobs,
  };
}

test('a job runs once per run_id, with its event, and keeps its output', async () => {
  const { jobs, settle, runs } = await setup();
  jobs.applyManifest('dev', manifest([{ name: 'sum', runId: 1, event: { input: [100, 200, 300] } }]));
  await settle();
  const first = jobs.getJob('dev', 'summer-sum');
  assert.equal(first.phase, 'Succeeded');
  assert.deepEqual(JSON.parse(first.message ?? ''), { sum: 600 });
  jobs.applyManifest('dev', manifest([{ name: 'sum', runId: 1, event: { input: [1] } }]));
  await settle();
  assert.equal(runs(), 1, 'the same run_id does not run again');
  jobs.applyManifest('dev', manifest([{ name: 'sum', runId: 2, event: { input: [1, 2] } }]));
  await settle();
  assert.deepEqual(JSON.parse(jobs.getJob('dev', 'summer-sum').message ?? ''), { sum: 3 });
  assert.equal(jobs.getJob('dev', 'summer-sum').runId, 2);
});

test('run_id 0 is Skipped; a job of a function without code fails and says why', async () => {
  const { jobs, settle, state } = await setup();
  jobs.applyManifest('dev', manifest([{ name: 'later', runId: 0 }]));
  assert.equal(jobs.getJob('dev', 'summer-later').phase, 'Skipped');
  state.data.jobs['dev/orphan'] = { name: 'orphan', namespace: 'dev', functionRef: 'gone', runId: 1, phase: 'Running', managedBy: 'api' };
  jobs.resume();
  await settle();
  assert.equal(jobs.getJob('dev', 'orphan').phase, 'Failed');
  assert.match(jobs.getJob('dev', 'orphan').message ?? '', /has no built code yet/);
});

test('a job a stop of sless dev interrupted runs again at the next start', async () => {
  const { jobs, settle, state } = await setup();
  state.data.jobs['dev/summer-sum'] = {
    name: 'summer-sum',
    namespace: 'dev',
    functionRef: 'summer',
    eventJson: '{"input":[2,3]}',
    runId: 4,
    phase: 'Running',
    managedBy: 'git:local',
  };
  jobs.resume();
  await settle();
  assert.equal(jobs.getJob('dev', 'summer-sum').phase, 'Succeeded');
  assert.deepEqual(JSON.parse(jobs.getJob('dev', 'summer-sum').message ?? ''), { sum: 5 });
  jobs.stop();
});

test('schedules become cron triggers named as on Kubernetes, <function>-cron-<schedule>; /v1 cannot delete them', async () => {
  const { jobs } = await setup();
  jobs.applyManifest('dev', manifest([], [{ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Moscow', event: { kind: 'nightly' } }]));
  const t = jobs.getTrigger('dev', cronTriggerName('summer', 'nightly'));
  assert.equal(t.name, 'summer-cron-nightly');
  assert.deepEqual([t.type, t.schedule, t.timezone, t.eventJson, t.active], ['cron', '0 3 * * *', 'Europe/Moscow', '{"kind":"nightly"}', true]);
  await assert.rejects(jobs.deleteTrigger('dev', 'summer-cron-nightly'), (e: PlatformError) => e.code === 'managed_by_git' && e.repository === 'local');
  await jobs.setTriggerEnabled('dev', 'summer-cron-nightly', false);
  jobs.applyManifest('dev', manifest([], [{ name: 'nightly', cron: '0 4 * * *' }]));
  assert.equal(jobs.getTrigger('dev', 'summer-cron-nightly').enabled, false, 'a PATCH survives the next sync');
  jobs.applyManifest('dev', manifest([], []));
  assert.deepEqual(
    jobs.listTriggers('dev').map((x) => [x.name, x.type, x.enabled, x.managedBy]),
    [['summer-http', 'http', true, 'git:local']],
    'http.enabled is the <fn>-http trigger, as on Kubernetes',
  );
  await assert.rejects(jobs.setTriggerEnabled('dev', 'summer-http', false), (e: PlatformError) => e.code === 'managed_by_git');
  jobs.stop();
});

test('a schedule trigger stored under the old dev name <function>-<schedule> is taken over with its state', async () => {
  const { jobs, state } = await setup();
  state.data.triggers['dev/summer-nightly'] = {
    name: 'summer-nightly',
    namespace: 'dev',
    type: 'cron',
    functionRef: 'summer',
    schedule: '0 3 * * *',
    enabled: false,
    active: false,
    lastScheduleTime: '2026-01-01T03:00:00.000Z',
    managedBy: 'git:local',
  };
  jobs.applyManifest('dev', manifest([], [{ name: 'nightly', cron: '0 3 * * *' }]));
  assert.deepEqual(
    jobs.listTriggers('dev').filter((t) => t.type === 'cron').map((t) => [t.name, t.enabled, t.lastScheduleTime]),
    [['summer-cron-nightly', false, '2026-01-01T03:00:00.000Z']],
  );
  jobs.stop();
});

test('/v1 triggers are checked: a bad cron, a missing function', async () => {
  const { jobs } = await setup();
  await assert.rejects(
    jobs.createTrigger('dev', { name: 't1', type: 'cron', functionRef: 'summer', schedule: '61 * * * *' }),
    (e: PlatformError) => e.code === 'invalid' && e.message === `trigger t1: ${checkCron('61 * * * *') ?? ''}`,
  );
  // The function.yaml rule, not croner's: croner takes six fields and a 7 for Sunday, CronJobs do not.
  for (const schedule of ['0 0 3 * * *', '0 3 * * 7']) {
    await assert.rejects(jobs.createTrigger('dev', { name: 't4', type: 'cron', functionRef: 'summer', schedule }), (e: PlatformError) => e.code === 'invalid');
  }
  await assert.rejects(
    jobs.createTrigger('dev', { name: 't5', type: 'cron', functionRef: 'summer', schedule: '* * * * *', timezone: '+03:00' }),
    (e: PlatformError) => e.code === 'invalid' && /IANA/.test(e.message),
  );
  await assert.rejects(
    jobs.createTrigger('dev', { name: 't2', type: 'cron', functionRef: 'nope', schedule: '* * * * *' }),
    (e: PlatformError) => e.code === 'invalid' && /does not exist/.test(e.message),
  );
  const http = await jobs.createTrigger('dev', { name: 't3', type: 'http', functionRef: 'summer' });
  assert.equal(http.url, 'http://localhost:8080/fn/dev/summer');
  jobs.stop();
});
