// `sless dev --database-url`: invocations and builds go to a real PostgreSQL and come back through
// /v1 .../invocations and .../builds.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const databaseUrl = process.env.SLESS_TEST_DATABASE_URL;
const name = `pg-${randomBytes(4).toString('hex')}`;
let folder: string;
let dev: DevProcess;

before(async () => {
  assert.ok(databaseUrl, 'SLESS_TEST_DATABASE_URL is not set: run through `npm test` (it starts the postgres service)');
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-pg-'));
  await mkdir(path.join(folder, name));
  await writeFile(path.join(folder, name, 'function.yaml'), 'runtime: nodejs20\n');
  await writeFile(path.join(folder, name, 'handler.js'), 'exports.handle = async () => "ok";\n');
  dev = await startDevProcess({ repo: folder, extraArgs: ['--database-url', databaseUrl] });
  await dev.waitForLog(/synced rev/);
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  if (folder) await rm(folder, { recursive: true, force: true });
});

test('invocations and builds of sless dev are kept in PostgreSQL', async () => {
  assert.match(dev.log(), /invocation and build logs go to PostgreSQL/);
  for (let i = 0; i < 3; i++) assert.equal((await callFunction(dev.url, `${name}/call-${i}`)).status, 200);
  const auth = { authorization: `Bearer ${await dev.adminToken()}` };
  const calls = await eventually(async () => {
    const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/${name}/invocations?limit=10`, { headers: auth });
    const list = (await res.json()) as Array<{ path: string; status: number }>;
    return list.length >= 3 ? list : undefined;
  }, 'three invocations in PostgreSQL');
  assert.deepEqual(calls.map((c) => c.status), [200, 200, 200]);
  assert.deepEqual(calls.map((c) => c.path), ['/call-2', '/call-1', '/call-0']);
  const builds = (await (await fetch(`${dev.url}/v1/namespaces/dev/functions/${name}/builds`, { headers: auth })).json()) as Array<{ outcome: string }>;
  assert.equal(builds[0]?.outcome, 'succeeded');
});
