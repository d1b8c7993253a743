// What the old system's clients (its Terraform provider and web console, written against a Go server)
// send and read, on the memory platform: empty bodies with a JSON content type, unknown fields,
// validation errors as 400, PUT of a few fields, zips with any content type, /source as JSON, and
// /fn in the OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { readZip } from '../../src/http/read-zip.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import { hs256Token, NS, testApp, upstream } from '../helpers/http-test-kit.ts';

describe('/v1 for the old clients', async () => {
  const { app, platform } = await testApp();
  let auth: Record<string, string> = {};
  before(async () => {
    auth = { authorization: `Bearer ${await hs256Token()}` };
  });
  after(() => app.close());
  const url = (path: string) => `/v1/namespaces/${NS}${path}`;
  const call = (method: InjectOptions['method'], path: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method, url: url(path), headers: { ...auth, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** As Go's helpers do it: Content-Type: application/json on every request, also without a body. */
  const goCall = (method: InjectOptions['method'], path: string) => app.inject({ method, url: url(path), headers: { ...auth, 'content-type': 'application/json' } });

  it('takes an empty body with a JSON content type as no body (ensure, every DELETE)', async () => {
    assert.equal((await goCall('POST', '/ensure')).statusCode, 200);
    await call('POST', '/functions', { name: 'empty-body', runtime: 'nodejs20' });
    await call('POST', '/triggers', { name: 'empty-body-web', type: 'http', function_ref: 'empty-body' });
    await call('POST', '/jobs', { name: 'empty-body-once', function_ref: 'empty-body' });
    for (const path of ['/triggers/empty-body-web', '/jobs/empty-body-once', '/functions/empty-body']) {
      const res = await goCall('DELETE', path);
      assert.equal(res.statusCode, 204, `DELETE ${path}: ${res.body}`);
    }
    const notJson = await app.inject({ method: 'POST', url: url('/ensure'), headers: { ...auth, 'content-type': 'application/json' }, payload: '{' });
    assert.equal(notJson.json().code, 'invalid_json', 'a body that is there must still be JSON');
  });

  it('ignores unknown fields on the old routes and names them in a Warning header', async () => {
    const created = await call('POST', '/functions', { name: 'lenient', runtime: 'nodejs20', description: 'x', replicas: 2 });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.warning, '299 sless "unknown fields ignored: description, replicas"');
    assert.equal(created.json().description, undefined);
    const put = await call('PUT', '/functions/lenient', { memory_mb: 256, namespace: NS, phase: 'Ready' });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.headers.warning, '299 sless "unknown fields ignored: namespace, phase"');
    const trigger = await call('POST', '/triggers', { name: 'lenient-web', type: 'http', function_ref: 'lenient', namespace: NS });
    assert.equal(trigger.statusCode, 201, trigger.body);
    assert.match(String(trigger.headers.warning), /namespace/);
    const patch = await call('PATCH', '/triggers/lenient-web', { enabled: false, type: 'http' });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.match(String(patch.headers.warning), /type/);
    const job = await call('POST', '/jobs', { name: 'lenient-once', function_ref: 'lenient', run_id: 1, phase: 'Pending' });
    assert.equal(job.statusCode, 201, job.body);
    assert.equal((await call('POST', '/functions', { name: 'strict-free', runtime: 'nodejs20' })).headers.warning, undefined, 'no warning without unknown fields');
    // New routes stay strict: a typo in a repository is refused.
    assert.equal((await call('POST', '/repositories', { name: 'r', url: 'https://git.example/r.git', brnach: 'dev' })).statusCode, 400);
  });

  it('answers invalid values with 400, also those only a platform can judge', async () => {
    assert.equal((await call('POST', '/functions', { name: 'x', runtime: 'cobol' })).statusCode, 400);
    await call('POST', '/functions', { name: 'judged', runtime: 'nodejs20' });
    const badCron = await call('POST', '/triggers', { name: 'judged-bad', type: 'cron', function_ref: 'judged', schedule: '61 * * * *' });
    assert.equal(badCron.statusCode, 400, badCron.body);
    assert.equal(badCron.json().code, 'invalid');
    const noFn = await call('POST', '/jobs', { name: 'orphan', function_ref: 'missing-fn' });
    assert.equal(noFn.statusCode, 400, noFn.body);
  });

  it('PUT changes only the fields it carries; without runtime it keeps the current one', async () => {
    await call('POST', '/functions', {
      name: 'partial',
      runtime: 'python3.11',
      entrypoint: 'main.run',
      memory_mb: 256,
      timeout_sec: 20,
      env_vars: { A: '1' },
    });
    const env = await call('PUT', '/functions/partial', { env_vars: { B: '2' } });
    assert.equal(env.statusCode, 200, env.body);
    const after = (await call('GET', '/functions/partial')).json();
    assert.deepEqual(
      [after.runtime, after.entrypoint, after.memory_mb, after.timeout_sec, after.env_vars],
      ['python3.11', 'main.run', 256, 20, { B: '2' }],
    );
    assert.equal((await call('PUT', '/functions/partial', { timeout_sec: 901 })).statusCode, 400);
  });

  it('takes a zip upload by its bytes whatever the content type, or none', async () => {
    await call('POST', '/functions', { name: 'zipped', runtime: 'nodejs20' });
    const zip = writeZip([{ path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = () => "hi"') }]);
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const res = await app.inject({
        method: 'POST',
        url: url('/functions/zipped/upload'),
        headers: { ...auth, ...(type ? { 'content-type': type } : {}) },
        payload: zip,
      });
      assert.equal(res.statusCode, 200, `${type ?? 'no content type'}: ${res.body}`);
    }
    const notZip = await call('POST', '/functions/zipped/upload', { zip: 'no' });
    assert.equal(notZip.statusCode, 400);
    assert.equal(notZip.json().code, 'invalid_zip');
  });

  it('GET .../source answers the files as JSON, and the zip for Accept: application/zip', async () => {
    await call('POST', '/functions', { name: 'readable', runtime: 'nodejs20' });
    platform.sources.set(`${NS}/readable`, [
      { path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = () => "héllo"') },
      { path: 'run.sh', mode: '100755', content: Buffer.from('#!/bin/sh\n') },
      { path: 'logo.bin', mode: '100644', content: Buffer.from([0, 255, 1, 2]) },
    ]);
    const json = await call('GET', '/functions/readable/source');
    assert.equal(json.statusCode, 200);
    assert.match(String(json.headers['content-type']), /^application\/json/);
    assert.deepEqual(json.json(), {
      files: [
        { path: 'handler.js', content: 'exports.handle = () => "héllo"', encoding: 'utf-8', mode: '100644' },
        { path: 'logo.bin', content: Buffer.from([0, 255, 1, 2]).toString('base64'), encoding: 'base64', mode: '100644' },
        { path: 'run.sh', content: '#!/bin/sh\n', encoding: 'utf-8', mode: '100755' },
      ],
    });
    const zip = await call('GET', '/functions/readable/source', undefined, { accept: 'application/zip' });
    assert.equal(zip.headers['content-type'], 'application/zip');
    assert.deepEqual((await readZip(zip.rawPayload)).map((f) => f.path).sort(), ['handler.js', 'logo.bin', 'run.sh']);
  });

  it('documents /fn and the JSON source in the OpenAPI document', async () => {
    const doc = (await app.inject({ url: '/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    for (const path of ['/fn/{namespace}/{name}', '/fn/{namespace}/{name}/{rest}']) {
      const ops = doc.paths[path];
      assert.ok(ops, `missing ${path}`);
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const op: { security?: unknown[]; responses: Record<string, unknown> } | undefined = ops[method];
        assert.ok(op, `missing ${method} ${path}`);
        assert.deepEqual(op.security, [], '/fn takes no token');
        for (const status of ['404', '502', '503', '504']) assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
      }
    }
    const source = doc.paths['/v1/namespaces/{ns}/functions/{name}/source']?.get?.responses['200']?.content ?? {};
    assert.deepEqual(Object.keys(source).sort(), ['application/json', 'application/zip']);
  });
});

describe('http triggers: one rule', async () => {
  const { app, platform } = await testApp();
  const fn = await upstream((_req, res) => res.end('live'));
  let auth: Record<string, string> = {};
  before(async () => {
    auth = { authorization: `Bearer ${await hs256Token()}` };
  });
  after(async () => {
    await app.close();
    await fn.close();
  });
  const call = (method: InjectOptions['method'], path: string, payload?: unknown) =>
    app.inject({ method, url: `/v1/namespaces/${NS}${path}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });
  const invoke = async (name: string) => (await app.inject({ url: `/fn/${NS}/${name}` })).statusCode;

  it('a function serves while it has no http trigger or any enabled one; disabled answers 503', async () => {
    assert.equal((await call('POST', '/functions', { name: 'web', runtime: 'nodejs20' })).json().http_enabled, true);
    platform.serve(NS, 'web', fn.url);
    assert.deepEqual((await call('GET', '/triggers')).json(), [], 'no trigger nobody made');
    assert.equal(await invoke('web'), 200, 'no http trigger: serves');
    // The client may name its trigger <fn>-http: nothing of ours is in the way.
    assert.equal((await call('POST', '/triggers', { name: 'web-http', type: 'http', function_ref: 'web' })).statusCode, 201);
    assert.equal((await call('PATCH', '/triggers/web-http', { enabled: false })).statusCode, 200);
    assert.equal(await invoke('web'), 503);
    assert.equal((await call('GET', '/functions/web')).json().http_enabled, false);
    assert.equal((await call('PUT', '/functions/web', { env_vars: { A: '1' } })).json().http_enabled, false, 'a PUT without http_enabled leaves the triggers alone');
    assert.equal(await invoke('web'), 503);
    await call('POST', '/triggers', { name: 'web-second', type: 'http', function_ref: 'web', enabled: true });
    assert.equal(await invoke('web'), 200, 'any enabled http trigger: serves');
    await call('DELETE', '/triggers/web-second');
    assert.equal(await invoke('web'), 503);
    await call('PATCH', '/triggers/web-http', { enabled: true });
    assert.equal(await invoke('web'), 200);
  });

  it('http_enabled in a POST or PUT sets the http triggers: false makes a disabled <fn>-http when there is none', async () => {
    await call('POST', '/functions', { name: 'quiet', runtime: 'nodejs20', http_enabled: false });
    platform.serve(NS, 'quiet', fn.url);
    assert.equal(await invoke('quiet'), 503);
    assert.deepEqual(
      (await call('GET', '/triggers/quiet-http')).json(),
      { name: 'quiet-http', type: 'http', function_ref: 'quiet', enabled: false, active: false, managed_by: 'api' },
    );
    assert.equal((await call('PUT', '/functions/quiet', { http_enabled: true })).json().http_enabled, true);
    assert.equal(await invoke('quiet'), 200);
  });
});
