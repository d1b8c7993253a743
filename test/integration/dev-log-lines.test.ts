// Every line `sless dev` logs reads the same way, `HH:MM:SS.mmm <level> <message>`: the HTTP server's
// warnings (a refused webhook, a refused token) too, not raw JSON among the readable lines.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { startDev, type DevServer } from '../../src/cli/dev.ts';
import { loadDevConfig } from '../../src/config/config.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-log-'));
const repo = path.join(root, 'repo');
await mkdir(repo);
let out = '';
const capture = () => new PassThrough().on('data', (d: Buffer) => (out += d.toString('utf8')));
const io = { stdout: capture(), stderr: capture() };
let dev: DevServer;

before(async () => {
  dev = await startDev(loadDevConfig(['--repo', repo, '--port', '0', '--data-dir', path.join(root, 'data'), '--poll-interval', '1h'], {}), io);
});
after(async () => {
  await dev?.close();
  await rm(root, { recursive: true, force: true });
});

/** The log lines: what follows the start banner (its last line names the data dir). */
const logLines = () => out.slice(out.indexOf('\n\n', out.indexOf('  data'))).split('\n').filter((l) => l.trim() !== '');

describe('sless dev log lines', () => {
  it('logs a refused webhook as a readable line with its fields, like every other line', async () => {
    const res = await fetch(`${dev.url}/hooks/dev/local`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push', 'x-gitea-delivery': 'd-1' }, body: '{}' });
    assert.equal(res.status, 401);
    const line = await waitFor(() => logLines().find((l) => l.includes('webhook refused')));
    assert.match(line, /^\d\d:\d\d:\d\d\.\d{3} warn webhook refused provider=gitea delivery=d-1 namespace=dev repository=local reason="no X-Gitea-Signature header: /);
    for (const l of logLines()) assert.match(l, /^\d\d:\d\d:\d\d\.\d{3} (info|warn|error) \S/, `not in the readable format: ${l}`);
  });
});

async function waitFor<T>(get: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not logged within ${timeoutMs} ms; the output:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
