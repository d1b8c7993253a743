// The client commands (get, describe, invoke, sync) through their entry function, against the real
// HTTP app on a loopback port with the memory platform: what /v1 answers is what the CLI prints,
// errors are one line with exit 1.
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { clientEnv } from '../../src/config/client-env.ts';
import { runClientCommand, type ClientCommand } from '../../src/cli/client/command.ts';
import { describeCommand } from '../../src/cli/client/describe.ts';
import { getCommand } from '../../src/cli/client/get.ts';
import { invokeCommand } from '../../src/cli/client/invoke.ts';
import { loginCommand } from '../../src/cli/client/login.ts';
import { syncCommand } from '../../src/cli/client/sync.ts';
import type { FunctionRecord, RepositoryRecord } from '../../src/platform/types.ts';
import { hs256Token, listen, NS, testApp, upstream, type TestApp } from '../helpers/http-test-kit.ts';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    cb();
  }
}

let t: TestApp;
let url: string;
let token: string;
const upstreams: Array<{ close: () => Promise<void> }> = [];

async function cli(
  command: ClientCommand,
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runClientCommand(
    command,
    argv,
    { stdout, stderr },
    clientEnv({ SLESS_ENDPOINT: url, SLESS_API_TOKEN: token, XDG_CONFIG_HOME: '/nonexistent', ...env }),
  );
  return { code, stdout: stdout.text, stderr: stderr.text };
}

async function v1(path: string): Promise<unknown> {
  const res = await fetch(`${url}/v1/namespaces/${NS}/${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  return res.json();
}

function setFunction(name: string, fields: Partial<FunctionRecord>): void {
  const key = `${NS}/${name}`;
  const old = t.platform.functions.get(key) as FunctionRecord;
  t.platform.functions.set(key, { ...old, ...fields });
}

before(async () => {
  t = await testApp();
  url = await listen(t.app);
  token = await hs256Token();
  const echo = await upstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url?.startsWith('/boom')) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        return;
      }
      const body = Buffer.concat(chunks).toString();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          trace: req.headers['x-trace'],
          type: req.headers['content-type'],
          auth: req.headers.authorization ?? null,
          got: body ? JSON.parse(body) : null,
        }),
      );
    });
  });
  upstreams.push(echo);
  t.platform.serve(NS, 'echo', echo.url);
  setFunction('echo', { phase: 'Ready', url: `${url}/fn/${NS}/echo` });
  await t.platform.createFunction(NS, { name: 'worker', runtime: 'python3.11' });
  await t.platform.createTrigger(NS, {
    name: 'nightly',
    type: 'cron',
    functionRef: 'worker',
    schedule: '0 3 * * *',
  });
  t.deps.buildLog.record({
    namespace: NS,
    function: 'echo',
    codeHash: `sha256:${'c'.repeat(64)}`,
    outcome: 'succeeded',
    startedAt: '2026-12-06T09:00:00.000Z',
    durationMs: 1500,
  });
});

after(async () => {
  await t.app.close();
  for (const u of upstreams) await u.close();
});

describe('sless get', () => {
  it('lists functions as a table, and as /v1’s own JSON and YAML', async () => {
    const table = await cli(getCommand, ['functions']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0] as string, /^NAME +RUNTIME +PHASE +MANAGED-BY +URL$/);
    assert.ok(
      lines.some((l) => /^echo +nodejs20 +Ready +api +http/.test(l)),
      table.stdout,
    );
    assert.ok(
      lines.some((l) => /^worker +python3.11 +Pending +api +-$/.test(l)),
      table.stdout,
    );
    const listed = await v1('functions');
    assert.deepEqual(JSON.parse((await cli(getCommand, ['functions', '-o', 'json'])).stdout), listed);
    assert.deepEqual(parse((await cli(getCommand, ['functions', '--output=yaml'])).stdout), listed);
  });

  it('shows one object by NAME; triggers, repositories and a function’s builds', async () => {
    assert.deepEqual(
      JSON.parse((await cli(getCommand, ['function', 'worker', '-o', 'json'])).stdout),
      await v1('functions/worker'),
    );
    assert.match((await cli(getCommand, ['triggers'])).stdout, /nightly +cron +worker +0 3 \* \* \* +true/);
    assert.equal(
      (await cli(getCommand, ['repositories'])).stdout,
      'NAME  URL  BRANCH  REVISION  LAST-SYNC  READY  FUNCTIONS\n',
    );
    assert.match(
      (await cli(getCommand, ['builds', 'echo'])).stdout,
      /sha256:cccccccccccc +succeeded +2026-12-06T09:00:00.000Z +1.5s/,
    );
    const noName = await cli(getCommand, ['builds']);
    assert.deepEqual(
      [noName.code, noName.stderr],
      [1, 'sless get: builds belong to a function: sless get builds FUNCTION\n'],
    );
  });

  it('jobs: a server without the list route gets a one-line error, not a 404 dump', async () => {
    const r = await cli(getCommand, ['jobs']);
    if (r.code === 0) {
      // This server lists jobs (the route another change adds): then it is an ordinary table.
      assert.match(r.stdout, /^NAME +FUNCTION +RUN +PHASE +STARTED +COMPLETED\n/);
      return;
    }
    assert.equal(
      r.stderr,
      `sless get: this server cannot list jobs (GET /v1/namespaces/${NS}/jobs answered 404); upgrade sless, or show one job with sless get jobs NAME\n`,
    );
  });

  it('errors are one line that names the request and what to do, exit 1', async () => {
    const missing = await cli(getCommand, ['functions', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      new RegExp(`^sless get: GET /v1/namespaces/${NS}/functions/nope answered 404: .+\\n$`),
    );
    const badToken = await cli(getCommand, ['functions'], {
      SLESS_API_TOKEN: await hs256Token({}, { secret: 'another-secret-of-enough-length-0123' }),
    });
    assert.equal(badToken.code, 1);
    assert.match(
      badToken.stderr,
      /^sless get: GET \/v1\/namespaces\/\S+\/functions answered 401: .*; check SLESS_API_TOKEN \(or run sless login again\)[^\n]*\n$/,
    );
    const otherNs = await cli(getCommand, ['functions', '-n', 'someone-else']);
    assert.equal(otherNs.code, 1);
    assert.match(otherNs.stderr, /answered 403: .*the token may not use namespace "someone-else"/);
    const kind = await cli(getCommand, ['pods']);
    assert.equal(
      kind.stderr,
      'sless get: cannot get "pods": name one of functions, triggers, jobs, repositories, builds, revisions\n',
    );
  });
});

describe('sless invoke and describe', () => {
  it('round-trips JSON through /fn, with headers and a rest path, without sending the API token', async () => {
    const r = await cli(invokeCommand, [
      'echo',
      '-d',
      '{"a":[1,2]}',
      '-H',
      'X-Trace: t1',
      '--path',
      '/items?x=1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      method: 'POST',
      url: '/items?x=1',
      trace: 't1',
      type: 'application/json',
      auth: null,
      got: { a: [1, 2] },
    });
    const put = await cli(invokeCommand, [
      'echo',
      '-X',
      'put',
      '-d',
      '"x"',
      '-H',
      'content-type: text/plain',
    ]);
    assert.deepEqual(JSON.parse(put.stdout), {
      method: 'PUT',
      url: '/',
      type: 'text/plain',
      auth: null,
      got: 'x',
    });
  });

  it('prints a 5xx answer, says its status on stderr and exits 1', async () => {
    const r = await cli(invokeCommand, ['echo', '--path', 'boom']);
    assert.deepEqual(
      [r.code, r.stdout, r.stderr],
      [1, '{"error":"boom"}', `sless invoke: GET /fn/${NS}/echo/boom answered 500\n`],
    );
  });

  it('describe shows spec, status, builds and the calls just made', async () => {
    const r = await cli(describeCommand, ['function', 'echo']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Name: +echo\nNamespace: +sless-/);
    assert.match(r.stdout, /Spec:\n {2}runtime: +nodejs20\n/);
    assert.match(r.stdout, /Status:\n {2}phase: +Ready\n/);
    assert.match(r.stdout, /Builds \(last 1\):\n {2}CODE-HASH .*\n {2}sha256:cccccccccccc +succeeded/);
    assert.match(r.stdout, /Invocations \(last [1-9]\d*\):\n {2}STARTED +METHOD +PATH +STATUS +DURATION\n/);
    assert.match(r.stdout, / GET +\/boom +500 /);
    const json = JSON.parse((await cli(describeCommand, ['function', 'echo', '-o', 'json'])).stdout) as {
      function: unknown;
      builds: unknown[];
    };
    assert.deepEqual(json.function, await v1('functions/echo'));
    assert.equal(json.builds.length, 1);
  });
});

describe('sless sync', () => {
  const repoKey = `${NS}/fns`;
  const repo = () => t.platform.repositories.get(repoKey) as RepositoryRecord;

  before(async () => {
    await t.platform.createRepository(NS, { name: 'fns', url: 'https://git.example/fns.git' });
    t.platform.repositories.set(repoKey, {
      ...repo(),
      revision: 'a'.repeat(40),
      lastSyncTime: '2026-12-06T09:00:00.000Z',
      functions: [{ name: 'worker', path: 'worker' }],
    });
    // Ready with the code of revision a: a sync's new code is what --wait must see.
    setFunction('worker', { phase: 'Ready', codeHash: `sha256:${'a'.repeat(64)}` });
  });

  /**
   * What the server's sync would do, some time after the request: a new revision with new code for
   * worker, then worker's phases (it stays Ready with its old code meanwhile).
   */
  function afterSyncRequest(revision: string, phases: FunctionRecord['phase'][], message?: string): void {
    const seen = t.platform.syncRequests.length;
    const codeHash = `sha256:${revision.repeat(64)}`;
    const timer = setInterval(() => {
      if (t.platform.syncRequests.length === seen) return;
      clearInterval(timer);
      t.platform.repositories.set(repoKey, {
        ...repo(),
        revision: revision.repeat(40),
        lastSyncTime: new Date().toISOString(),
        functions: [{ name: 'worker', path: 'worker', codeHash }],
      });
      phases.forEach((phase, i) =>
        setTimeout(() => setFunction('worker', { phase, message, codeHash }), 300 * (i + 1)),
      );
    }, 20);
  }

  it('without --wait: requests the sync and returns', async () => {
    const r = await cli(syncCommand, ['fns']);
    assert.deepEqual([r.code, r.stdout], [0, 'sync of fns requested\n']);
    assert.equal(t.platform.syncRequests.at(-1)?.reason, 'api');
  });

  it('--wait returns once the revision moved and every function is Ready', async () => {
    afterSyncRequest('b', ['Building', 'Ready']);
    const t0 = Date.now();
    const r = await cli(syncCommand, ['fns', '--wait', '--timeout', '20s']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'synced fns: revision bbbbbbbbbbbb: 1 function Ready\n');
    assert.ok(Date.now() - t0 >= 600, 'it waited for Building → Ready');
  });

  it('--wait exits 1 naming the function that failed', async () => {
    afterSyncRequest('c', ['Failed'], 'build failed: pip install exited 1');
    const r = await cli(syncCommand, ['fns', '--wait']);
    assert.deepEqual(
      [r.code, r.stderr],
      [
        1,
        'sless sync: synced fns, but function worker failed: build failed: pip install exited 1; sless describe function NAME shows its builds\n',
      ],
    );
  });

  it('--wait gives up after --timeout with a one-line error', async () => {
    const r = await cli(syncCommand, ['fns', '--wait', '--timeout', '1s']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^sless sync: fns did not finish syncing within 1s \(the repository has not synced yet\); .*--timeout\n$/,
    );
  });

  it('an unknown repository is a one-line 404', async () => {
    const r = await cli(syncCommand, ['nope', '--wait']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`^sless sync: GET /v1/namespaces/${NS}/repositories/nope answered 404: [^\\n]+\\n$`),
    );
  });
});

describe('sless login', () => {
  it('checks the token, stores it 0600, and later commands use it without SLESS_* variables', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'sless-login-'));
    try {
      const tokenFile = path.join(home, 'token');
      await writeFile(tokenFile, `${token}\n`);
      const noEnv = { SLESS_ENDPOINT: '', SLESS_API_TOKEN: '', XDG_CONFIG_HOME: home };
      const bad = path.join(home, 'bad');
      await writeFile(bad, await hs256Token({}, { secret: 'another-secret-of-enough-length-0123' }));
      const refused = await cli(loginCommand, ['--endpoint', url, '--token-file', bad], noEnv);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^sless login: GET \/v1\/namespaces\/\S+\/functions answered 401/);
      const r = await cli(loginCommand, ['--endpoint', `${url}/`, '--token-file', tokenFile], noEnv);
      assert.equal(r.code, 0, r.stderr);
      const file = path.join(home, 'sless', 'config.json');
      assert.equal(r.stdout, `logged in to ${url} (namespace ${NS}); settings stored in ${file}\n`);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const listed = await cli(getCommand, ['functions', '-o', 'json'], noEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout), await v1('functions'));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
