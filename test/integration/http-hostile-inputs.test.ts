// /v1 inputs a function could never use are refused up front with 400 and a message that says what
// and where (issue 31 items 10, 13, 14): never a 500, never a 201 for something that cannot run.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { startDevApiApp } from '../helpers/dev-api-app.ts';
import { hs256Token, NS, testApp } from '../helpers/http-test-kit.ts';

/** `sless dev`'s /v1: the local platform over an empty folder. */
async function devApp(): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'sless-hostile-'));
  await mkdir(path.join(root, 'repo'));
  const dev = await startDevApiApp({ repo: path.join(root, 'repo'), dataDir: path.join(root, 'data'), namespace: NS });
  return { app: dev.app, close: async () => (await dev.close(), await rm(root, { recursive: true, force: true })) };
}

for (const [where, start] of [
  [
    'the memory platform',
    async () => {
      const t = await testApp();
      return { app: t.app, close: () => t.app.close() };
    },
  ],
  ['sless dev (the local platform)', devApp],
] as const)
  describe(`/v1 refuses what a function could not use: ${where}`, async () => {
    const { app, close } = await start();
    let auth: Record<string, string> = {};
    before(async () => {
      auth = { authorization: `Bearer ${await hs256Token()}` };
      await call('POST', '/functions', { name: 'target', runtime: 'nodejs20' });
    });
    after(() => close());
    const call = (method: InjectOptions['method'], path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/v1/namespaces/${NS}${path}`,
        headers: auth,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const rawCall = (path: string, text: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/namespaces/${NS}${path}`,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: text,
      });
    const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const cron = (name: string, fields: Record<string, string>) => call('POST', '/triggers', { name, type: 'cron', function_ref: 'target', schedule: '0 3 * * *', ...fields });

    it('a cron schedule that never fires (April 31st) answers 400, not 500', async () => {
      const res = await cron('never', { schedule: '0 0 31 4,6,9,11 *' });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'invalid');
      assert.match(res.json().error, /never fires/);
    });

    it('an event_json nested 10,000 deep answers 400 (trigger as text, job as a value or as text)', async () => {
      const trigger = await cron('deep', { event_json: deep(10_000) });
      assert.equal(trigger.statusCode, 400, trigger.body);
      assert.match(trigger.json().error, /event_json: nested deeper than 64/);
      const jobValue = await rawCall(
        '/jobs',
        `{"name": "deep", "function_ref": "target", "event_json": ${deep(10_000)}}`,
      );
      assert.equal(jobValue.statusCode, 400, jobValue.body);
      assert.match(jobValue.json().error, /nested deeper than/);
      const jobText = await call('POST', '/jobs', {
        name: 'deep',
        function_ref: 'target',
        event_json: deep(10_000),
      });
      assert.equal(jobText.statusCode, 400, jobText.body);
      assert.match(jobText.json().error, /event_json.*nested deeper than 64/);
      const fine = await call('POST', '/jobs', {
        name: 'shallow',
        function_ref: 'target',
        event_json: deep(64),
      });
      assert.equal(fine.statusCode, 201, fine.body);
    });

    it('an env value with a NUL byte answers 400 on create and on update', async () => {
      const created = await call('POST', '/functions', {
        name: 'nul',
        runtime: 'nodejs20',
        env_vars: { A: 'x\u0000y' },
      });
      assert.equal(created.statusCode, 400, created.body);
      assert.match(created.json().error, /env_vars.*NUL/);
      const updated = await call('PUT', '/functions/target', { env_vars: { A: 'x\u0000y' } });
      assert.equal(updated.statusCode, 400, updated.body);
      assert.equal((await call('GET', '/functions/target')).json().env_vars.A, undefined);
    });
  });
