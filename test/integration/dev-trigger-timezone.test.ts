// The defect as a user met it in `sless dev`: POST a cron trigger with the time zone "Not/AZone".
// It must get 400 naming the time zone, store nothing, and leave the data dir startable.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { Registry } from 'prom-client';
import { buildApp } from '../../src/app/build-app.ts';
import { LocalPlatform } from '../../src/platform/local/local-platform.ts';
import { localRuntimes } from '../../src/platform/local/local-runtimes.ts';
import { silentLogger } from '../../src/platform/local/logger.ts';
import { openRepository } from '../../src/platform/local/open-repository.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { hs256Token, NS, SECRET } from '../helpers/http-test-kit.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-tz-'));
after(() => rm(root, { recursive: true, force: true }));
const repo = path.join(root, 'repo');
await mkdir(repo);
const dataDir = path.join(root, 'data');

async function start() {
  const platform = new LocalPlatform({
    dataDir,
    namespace: 'dev',
    repoName: 'local',
    repository: await openRepository({ repo, path: '', cacheDir: path.join(dataDir, 'git'), logger: silentLogger }),
    runtimes: localRuntimes(),
    pollIntervalMs: 3_600_000,
    logger: silentLogger,
    publicUrl: () => 'http://localhost:8080',
  });
  await platform.start();
  const app = await buildApp({
    platform,
    invocationLog: createMemoryInvocationLog(),
    buildLog: createMemoryBuildLog(),
    auth: { key: { kind: 'hs256', secret: SECRET } },
    registry: new Registry(),
    logger: false,
  });
  return { platform, app, close: async () => (await app.close(), await platform.close()) };
}

it('a trigger with a bad time zone gets 400, is not stored, and the next start works', async () => {
  const dev = await start();
  const headers = { authorization: `Bearer ${await hs256Token()}` };
  const url = `/v1/namespaces/${NS}`;
  assert.equal((await dev.app.inject({ method: 'POST', url: `${url}/functions`, headers, payload: { name: 'f', runtime: 'nodejs20' } })).statusCode, 201);
  const res = await dev.app.inject({
    method: 'POST',
    url: `${url}/triggers`,
    headers,
    payload: { name: 'nightly', type: 'cron', function_ref: 'f', schedule: '0 3 * * *', timezone: 'Not/AZone' },
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.match(res.json().error, /Not\/AZone/);
  assert.deepEqual((await dev.app.inject({ url: `${url}/triggers`, headers })).json(), []);
  await dev.close();
  assert.doesNotMatch(await readFile(path.join(dataDir, 'state.json'), 'utf8'), /Not\/AZone/);
  const again = await start();
  assert.equal((await again.app.inject({ url: `${url}/functions/f`, headers })).statusCode, 200);
  await again.close();
});
