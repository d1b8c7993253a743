// The webhook secret `sless dev` prints stays the same across restarts, so a webhook set up once in
// Gitea/GitHub keeps working: without --webhook-secret / SLESS_WEBHOOK_SECRET it is kept in
// <data-dir>/webhook-secret under the same file rules as jwt-secret (created exclusively, mode 0600,
// refused when group or others can read it or when it is a symlink).
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { startDev } from '../../src/cli/dev.ts';
import { loadDevConfig } from '../../src/config/config.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-hook-'));
after(() => rm(root, { recursive: true, force: true }));
const repo = path.join(root, 'repo');
await mkdir(repo);
const io = { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() };

function start(dataDir: string, args: string[] = [], env: Record<string, string> = {}) {
  return startDev(loadDevConfig(['--repo', repo, '--port', '0', '--data-dir', dataDir, '--poll-interval', '1h', ...args], env), io);
}

async function secretOf(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const dev = await start(dataDir, args, env);
  await dev.close();
  return dev.webhookSecret;
}

describe('the webhook secret of sless dev', () => {
  it('is the same after a restart; it is kept in a 0600 file in the data dir', async () => {
    const dataDir = path.join(root, 'data-restart');
    const first = await secretOf(dataDir);
    assert.equal((await stat(path.join(dataDir, 'webhook-secret'))).mode & 0o777, 0o600);
    assert.equal((await readFile(path.join(dataDir, 'webhook-secret'), 'utf8')).trim(), first);
    assert.equal(await secretOf(dataDir), first, 'the secret printed before the restart');
  });

  it('refuses to start on a secret file group or others can read, or on a symlink', async () => {
    const dataDir = path.join(root, 'data-open');
    await secretOf(dataDir);
    await chmod(path.join(dataDir, 'webhook-secret'), 0o640);
    await assert.rejects(start(dataDir), /webhook-secret \(the webhook secret\) is open to group or others \(mode 640\); chmod 600/);
    const linked = path.join(root, 'data-link');
    await mkdir(linked);
    await writeFile(path.join(root, 'elsewhere'), 'x'.repeat(32), { mode: 0o600 });
    await symlink(path.join(root, 'elsewhere'), path.join(linked, 'webhook-secret'));
    await assert.rejects(start(linked), /webhook-secret \(the webhook secret\) is a symlink/);
  });

  it('uses --webhook-secret or SLESS_WEBHOOK_SECRET when given, and keeps no file', async () => {
    const dataDir = path.join(root, 'data-given');
    assert.equal(await secretOf(dataDir, ['--webhook-secret', 'from-the-flag']), 'from-the-flag');
    assert.equal(await secretOf(dataDir, [], { SLESS_WEBHOOK_SECRET: 'from-the-env' }), 'from-the-env');
    await assert.rejects(stat(path.join(dataDir, 'webhook-secret')), { code: 'ENOENT' });
  });
});
