// A state.json that does not load (hand-edited, written by an older version, cut off) never stops
// `sless dev` from starting: what cannot be used is reported and skipped, the rest runs.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ChildGroup } from './child-group.ts';
import { JobsAndSchedules } from './jobs-and-schedules.ts';
import { LocalState } from './local-state.ts';
import type { Logger } from './logger.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function dataDir(stateJson: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-state-'));
  dirs.push(dir);
  await writeFile(path.join(dir, 'state.json'), stateJson);
  return dir;
}

function recording(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => void lines.push(`info ${m}`), warn: (m) => void lines.push(`warn ${m}`), error: (m) => void lines.push(`error ${m}`) };
}

const trigger = (name: string, timezone?: string) => ({
  name,
  namespace: 'dev',
  type: 'cron',
  functionRef: 'f',
  schedule: '0 3 * * *',
  ...(timezone ? { timezone } : {}),
  enabled: true,
  active: true,
  managedBy: 'api',
});

test('a stored trigger with a bad time zone is reported and skipped; the others are scheduled', async () => {
  const dir = await dataDir(
    JSON.stringify({ version: 1, repository: {}, functions: {}, jobs: {}, namespaces: [], triggers: { 'dev/bad': trigger('bad', 'Not/AZone'), 'dev/good': trigger('good', 'Europe/Moscow') } }),
  );
  const state = new LocalState(dir);
  const logger = recording();
  assert.deepEqual(await state.load(), []);
  const jobs = new JobsAndSchedules({
    state,
    children: new ChildGroup(),
    logger,
    managedBy: 'git:local',
    repoName: 'local',
    repoDisplayUrl: 'x',
    commandOf: () => ({ missing: 'none' }),
    functionExists: () => true,
    url: () => '',
    track: () => undefined,
  });
  jobs.resume();
  jobs.stop();
  assert.ok(logger.lines.some((l) => /^error .*trigger dev\/bad.*Not\/AZone.*skipped/.test(l)), logger.lines.join('\n'));
  assert.equal(jobs.getTrigger('dev', 'bad').active, false);
  assert.equal(jobs.getTrigger('dev', 'good').active, true);
});

test('malformed entries are dropped with a reason, good ones kept', async () => {
  const dir = await dataDir(
    JSON.stringify({
      version: 1,
      repository: {},
      functions: { 'dev/ok': { record: { name: 'ok', namespace: 'dev', runtime: 'nodejs20' } }, 'dev/broken': { buildKey: 'x' } },
      triggers: { 'dev/t': { name: 't' } },
      jobs: { 'dev/j': { name: 'j', namespace: 'dev', functionRef: 'ok', runId: 'one' } },
      namespaces: ['dev'],
    }),
  );
  const state = new LocalState(dir);
  const problems = await state.load();
  assert.deepEqual(Object.keys(state.data.functions), ['dev/ok']);
  assert.deepEqual(state.data.triggers, {});
  assert.deepEqual(state.data.jobs, {});
  assert.equal(problems.length, 3, problems.join('\n'));
  assert.ok(problems.some((p) => /function dev\/broken/.test(p)));
});

test('a state.json that is not JSON is moved aside and the start goes on from an empty state', async () => {
  const dir = await dataDir('{"version": 1, "functions": {');
  const state = new LocalState(dir);
  const problems = await state.load();
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? '', /not valid JSON.*moved to .*state\.json\.unreadable-/);
  assert.deepEqual(state.data.functions, {});
  const kept = (await readdir(dir)).find((n) => n.startsWith('state.json.unreadable-'));
  assert.ok(kept);
  assert.equal(await readFile(path.join(dir, kept), 'utf8'), '{"version": 1, "functions": {');
});
