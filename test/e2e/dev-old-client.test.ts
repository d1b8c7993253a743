// The old system's clients (its Terraform provider and web console), replayed against the real
// `sless dev` for nodejs20, python3.11 and go1.23, as they do it: the namespace from the JWT's sub,
// ensure, create, upload a zip, poll the function until Ready, http and cron triggers, a job with
// run_id 1 and its message, PATCH a trigger off and on, PUT env, a new upload, deletes. Go-style
// requests: Content-Type: application/json on every request, also without a body; a zip upload
// as application/octet-stream; bodies with fields the server does not know.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import type { CodeFile } from '../../src/platform/types.ts';
import { eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const SUB = 'terraform@example.com';
const NS = namespaceForSubject(SUB);
/** Each version takes this long to start, so "Ready" before the new version serves would show. */
const START_DELAY_S = 2;

const file = (p: string, content: string): CodeFile => ({ path: p, mode: '100644', content: Buffer.from(content) });

/** A function that answers {version, greeting} over http and {input, sum} as a job. */
const CODE: Record<string, (version: string) => CodeFile[]> = {
  nodejs20: (version) => [
    file(
      'handler.js',
      `const until = Date.now() + ${START_DELAY_S * 1000}; while (Date.now() < until) {}\n` +
        `exports.handle = async (event) => Array.isArray(event && event.input)\n` +
        `  ? { input: event.input, sum: event.input.reduce((a, b) => a + b, 0) }\n` +
        `  : { version: '${version}', greeting: process.env.GREETING || '' };\n`,
    ),
  ],
  'python3.11': (version) => [
    file(
      'handler.py',
      `import os, time\ntime.sleep(${START_DELAY_S})\n\n` +
        `def handle(event):\n` +
        `    if isinstance(event, dict) and isinstance(event.get("input"), list):\n` +
        `        return {"input": event["input"], "sum": sum(event["input"])}\n` +
        `    return {"version": "${version}", "greeting": os.environ.get("GREETING", "")}\n`,
    ),
  ],
  'go1.23': (version) => [
    file('go.mod', 'module example.com/oldclient\n\ngo 1.23\n'),
    file(
      'handler.go',
      `package oldclient\n\nimport (\n\t"context"\n\t"os"\n\t"time"\n)\n\n` +
        `func init() { time.Sleep(${START_DELAY_S} * time.Second) }\n\n` +
        `type Event struct {\n\tInput []int \`json:"input"\`\n}\n\n` +
        `func Handle(ctx context.Context, event Event) (map[string]any, error) {\n` +
        `\tif event.Input != nil {\n\t\tsum := 0\n\t\tfor _, n := range event.Input {\n\t\t\tsum += n\n\t\t}\n` +
        `\t\treturn map[string]any{"input": event.Input, "sum": sum}, nil\n\t}\n` +
        `\treturn map[string]any{"version": "${version}", "greeting": os.Getenv("GREETING")}, nil\n}\n`,
    ),
  ],
};

let dev: DevProcess;
let repoDir: string;
let token: string;

before(async () => {
  repoDir = await mkdtemp(path.join(os.tmpdir(), 'sless-old-client-'));
  await mkdir(path.join(repoDir, 'functions'));
  dev = await startDevProcess({ repo: repoDir, path: 'functions' });
  await dev.waitForLog(/synced rev/);
  // The provider's token: any subject; its namespace is derived, never configured.
  token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(SUB).setExpirationTime('1h').sign(new TextEncoder().encode(dev.jwtSecret));
});

after(async () => {
  await dev?.dispose();
  await rm(repoDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

/** As the Go client does it: JSON content type on every request. */
async function api(method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const res = await fetch(`${dev.url}/v1/namespaces/${NS}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function invoke(name: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${dev.url}/fn/${NS}/${name}`);
  return { status: res.status, body: await res.text() };
}

/** The provider's wait: GET every second until phase is Ready (Failed ends it too). */
async function pollUntilReady(name: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const fn = (await api('GET', `/functions/${name}`)).json;
      if (fn.phase === 'Failed') throw new Error(`function ${name} failed: ${String(fn.message)}`);
      return fn.phase === 'Ready' ? fn : undefined;
    },
    `${name} to be Ready`,
    240_000,
  );
}

for (const runtime of ['nodejs20', 'python3.11', 'go1.23'] as const) {
  const name = `old-${runtime.replace(/[^a-z0-9]/g, '')}`;
  const code = CODE[runtime] as (version: string) => CodeFile[];

  describe(`the old client flow on ${runtime}`, { timeout: 600_000 }, () => {
    it('ensure (empty JSON body), create with unknown fields, upload, poll until Ready: the uploaded version serves', async () => {
      const ensure = await api('POST', '/ensure');
      assert.equal(ensure.status, 200, JSON.stringify(ensure.json));
      const created = await api('POST', '/functions', {
        name,
        runtime,
        memory_mb: 128,
        timeout_sec: 30,
        env_vars: { GREETING: 'hello' },
        description: 'made by terraform',
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.match(created.headers.get('warning') ?? '', /unknown fields ignored: description/);
      const uploaded = await api('POST', `/functions/${name}/upload`, writeZip(code('v1')), 'application/octet-stream');
      assert.equal(uploaded.status, 200, JSON.stringify(uploaded.json));
      assert.notEqual(uploaded.json.phase, 'Ready', 'the upload’s own answer says the change is under way');
      const ready = await pollUntilReady(name);
      assert.ok(ready.last_built_at, 'a Ready function has last_built_at');
      const first = await invoke(name);
      assert.equal(first.status, 200, first.body);
      assert.deepEqual(JSON.parse(first.body), { version: 'v1', greeting: 'hello' });
    });

    it('GET .../source answers the files as JSON', async () => {
      const source = await api('GET', `/functions/${name}/source`);
      assert.equal(source.status, 200);
      const files = source.json.files as Array<{ path: string; content: string; encoding: string }>;
      assert.deepEqual(
        files.map((f) => [f.path, f.encoding, f.content]),
        code('v1').map((f) => [f.path, 'utf-8', f.content.toString()]).sort(),
      );
    });

    it('http and cron triggers; a job with run_id 1 gives its message; the same job again is 409', async () => {
      const http = await api('POST', '/triggers', { name: `${name}-http`, type: 'http', function_ref: name });
      assert.equal(http.status, 201, JSON.stringify(http.json));
      const cron = await api('POST', '/triggers', { name: `${name}-nightly`, type: 'cron', function_ref: name, schedule: '0 3 * * *', enabled: true });
      assert.equal(cron.status, 201, JSON.stringify(cron.json));
      const job = { name: `${name}-sum`, function_ref: name, run_id: 1, event_json: { input: [100, 200, 300] } };
      assert.equal((await api('POST', '/jobs', job)).status, 201);
      const done = await eventually(
        async () => {
          const j = (await api('GET', `/jobs/${name}-sum`)).json;
          return j.phase === 'Succeeded' || j.phase === 'Failed' ? j : undefined;
        },
        'the job',
        120_000,
      );
      assert.equal(done.phase, 'Succeeded', String(done.message));
      assert.deepEqual(JSON.parse(String(done.message)), { input: [100, 200, 300], sum: 600 });
      assert.equal((await api('POST', '/jobs', job)).status, 409);
    });

    it('PATCH the http trigger off: /fn answers 503; on again: it serves', async () => {
      const off = await api('PATCH', `/triggers/${name}-http`, { enabled: false });
      assert.equal(off.status, 200, JSON.stringify(off.json));
      await eventually(async () => (await invoke(name)).status === 503, '/fn to answer 503');
      assert.equal((await api('GET', `/functions/${name}`)).json.http_enabled, false);
      assert.equal((await api('PATCH', `/triggers/${name}-http`, { enabled: true })).status, 200);
      await eventually(async () => (await invoke(name)).status === 200, '/fn to serve again', 60_000);
    });

    it('PUT env (no runtime): in progress until the new settings serve, then Ready', async () => {
      const put = await api('PUT', `/functions/${name}`, { env_vars: { GREETING: 'bye' }, name });
      assert.equal(put.status, 200, JSON.stringify(put.json));
      assert.equal(put.json.runtime, runtime, 'a PUT without runtime keeps it');
      assert.notEqual(put.json.phase, 'Ready', 'the PUT’s own answer says the change is under way');
      assert.notEqual((await api('GET', `/functions/${name}`)).json.phase, 'Ready', 'and so does the next read');
      await pollUntilReady(name);
      assert.deepEqual(JSON.parse((await invoke(name)).body), { version: 'v1', greeting: 'bye' });
    });

    it('a new upload: Ready only once the new version serves; the same code again is Ready with last_built_at', async () => {
      const before = String((await api('GET', `/functions/${name}`)).json.last_built_at);
      const uploaded = await api('POST', `/functions/${name}/upload`, writeZip(code('v2')), 'application/json');
      assert.equal(uploaded.status, 200, JSON.stringify(uploaded.json));
      assert.notEqual(uploaded.json.phase, 'Ready');
      const ready = await pollUntilReady(name);
      assert.deepEqual(JSON.parse((await invoke(name)).body), { version: 'v2', greeting: 'bye' });
      assert.ok(String(ready.last_built_at) > before, 'a new build, a new last_built_at');
      // v1's code again: its earlier build is reused, and the function still says when it was built.
      await api('POST', `/functions/${name}/upload`, writeZip(code('v1')));
      const again = await pollUntilReady(name);
      assert.ok(again.last_built_at, 'Ready with last_built_at also when the code matched an earlier build');
      assert.deepEqual(JSON.parse((await invoke(name)).body), { version: 'v1', greeting: 'bye' });
    });

    it('deletes (empty JSON bodies): triggers, job, function', async () => {
      for (const p of [`/triggers/${name}-http`, `/triggers/${name}-nightly`, `/jobs/${name}-sum`, `/functions/${name}`]) {
        const res = await api('DELETE', p);
        assert.equal(res.status, 204, `DELETE ${p}: ${JSON.stringify(res.json)}`);
      }
      assert.equal((await api('GET', `/functions/${name}`)).status, 404);
      assert.equal((await invoke(name)).status, 404);
    });
  });
}
