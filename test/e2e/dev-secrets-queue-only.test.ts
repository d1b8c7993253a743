// `sless dev --secrets-dir DIR`: env_from_secrets is served from DIR/<secret>/<key> (the same folders
// queue credentials come from), a key of env: winning as on Kubernetes; a missing secret says so. And
// a queue-only function (http.enabled: false beside queues:) has no /fn route (503) while its queue
// trigger still delivers every message to it. The real dev process, the real Node runtime, the real
// RabbitMQ of the test run.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { devAmqp, type DevAmqp } from '../helpers/amqp.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const queue = `dev-queue-only-${process.pid}`;
let folder: string;
let secrets: string;
let out: string;
let dev: DevProcess;
let amqp: DevAmqp;

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
  await writeFile(path.join(folder, file), text);
}

before(async () => {
  amqp = await devAmqp();
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-secrets-'));
  secrets = amqp.secretsDir;
  out = path.join(folder, 'calls.txt');
  await mkdir(path.join(secrets, 'app-config'));
  await writeFile(path.join(secrets, 'app-config/API_KEY'), 'k-123\n');
  await writeFile(path.join(secrets, 'app-config/MODE'), 'from-secret');
  // Not an environment variable name: left out, as the kubelet leaves it out.
  await writeFile(path.join(secrets, 'app-config/not-a-name'), 'x');

  await write('fns/configured/function.yaml', ['runtime: nodejs22', 'entrypoint: handler.mjs.handle', 'env: {MODE: from-env}', 'env_from_secrets: [app-config]', ''].join('\n'));
  await write(
    'fns/configured/handler.mjs',
    'export function handle() { return { key: process.env.API_KEY ?? null, mode: process.env.MODE ?? null, odd: process.env["not-a-name"] ?? null }; }\n',
  );
  await write('fns/unconfigured/function.yaml', ['runtime: nodejs22', 'entrypoint: handler.mjs.handle', 'env_from_secrets: [missing-secret]', ''].join('\n'));
  await write('fns/unconfigured/handler.mjs', 'export function handle() { return {}; }\n');
  await write(
    'fns/worker/function.yaml',
    [
      'runtime: nodejs22',
      'entrypoint: handler.mjs.handle',
      `env: {OUT_FILE: ${JSON.stringify(out)}}`,
      'http: {enabled: false}',
      'queues:',
      '  - name: jobs',
      `    url: ${amqp.bareUrl}`,
      '    secret: rabbit',
      `    queue: ${queue}`,
      '    declare: true',
      '',
    ].join('\n'),
  );
  await write(
    'fns/worker/handler.mjs',
    "import { appendFileSync } from 'node:fs';\nexport function handle(event, context) { appendFileSync(process.env.OUT_FILE, `${context.headers['ce-id']}\\n`); return { ok: true }; }\n",
  );
  dev = await startDevProcess({ repo: path.join(folder, 'fns'), extraArgs: ['--secrets-dir', secrets] });
  await dev.waitForLog(/configured: ready at/, { timeoutMs: 120_000 });
  await dev.waitForLog(/dev\/worker queue trigger jobs .*: consuming$/, { timeoutMs: 60_000 });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await amqp?.close();
  await rm(folder, { recursive: true, force: true });
});

test('env_from_secrets comes from --secrets-dir DIR/<secret>/<key>; env: wins over a secret key', async () => {
  const res = await callFunction(dev.url, 'configured');
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(JSON.parse(res.body), { key: 'k-123', mode: 'from-env', odd: null });
});

test('a secret missing from --secrets-dir fails the function with the folder it looked for', async () => {
  const fn = await eventually(async () => {
    const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/unconfigured`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
    const body = (await res.json()) as { phase: string; message?: string };
    return body.phase === 'Failed' ? body : undefined;
  }, 'the function failed');
  assert.match(fn.message ?? '', /env_from_secrets: secret "missing-secret" not found: no folder .*missing-secret/);
});

test('a queue-only function (http.enabled: false) answers 503 on /fn and still gets every message', async () => {
  const routed = await callFunction(dev.url, 'worker');
  assert.equal(routed.status, 503);
  assert.match(routed.body, /http\.enabled: false/);
  const ids = Array.from({ length: 50 }, (_, i) => `q-${i}`);
  const ch = await amqp.conn.createConfirmChannel();
  for (const id of ids) ch.sendToQueue(queue, Buffer.from('{}'), { messageId: id, persistent: true });
  await ch.waitForConfirms();
  await ch.close();
  await eventually(async () => {
    const seen = new Set((await readFile(out, 'utf8').catch(() => '')).split('\n').filter(Boolean));
    return ids.every((id) => seen.has(id)) ? true : undefined;
  }, 'every message delivered to the queue-only function', 60_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; dev's log:\n${dev.log().slice(-3000)}`);
  });
});
