// The admin token `sless dev` (and `npm start`) prints keeps working after a restart: without
// SLESS_JWT_SECRET its signing secret is kept in <data-dir>/jwt-secret (mode 0600), and a secret
// file that group or others could read is refused at start.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { startDev } from '../../src/cli/dev.ts';
import { loadDevConfig } from '../../src/config/config.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-token-'));
after(() => rm(root, { recursive: true, force: true }));
const repo = path.join(root, 'repo');
await mkdir(repo);
const io = { stdout: new PassThrough().resume(), stderr: new PassThrough().resume() };

function start(dataDir: string, env: Record<string, string> = {}) {
  return startDev(loadDevConfig(['--repo', repo, '--port', '0', '--data-dir', dataDir, '--poll-interval', '1h'], env), io);
}

async function functionsWith(url: string, token: string | undefined): Promise<number> {
  return (await fetch(`${url}/v1/namespaces/dev/functions`, { headers: { authorization: `Bearer ${token}` } })).status;
}

describe('the admin token of sless dev', () => {
  it('keeps working after a restart; its secret is a 0600 file in the data dir', async () => {
    const dataDir = path.join(root, 'data-restart');
    const first = await start(dataDir);
    const token = first.adminToken;
    assert.ok(token);
    assert.equal(await functionsWith(first.url, token), 200);
    await first.close();
    assert.equal((await stat(path.join(dataDir, 'jwt-secret'))).mode & 0o777, 0o600);
    const second = await start(dataDir);
    try {
      assert.equal(await functionsWith(second.url, token), 200, 'the token printed before the restart');
    } finally {
      await second.close();
    }
  });

  it('refuses to start on a secret file group or others can read', async () => {
    const dataDir = path.join(root, 'data-open');
    await (await start(dataDir)).close();
    await chmod(path.join(dataDir, 'jwt-secret'), 0o644);
    await assert.rejects(start(dataDir), /jwt-secret .*open to group or others \(mode 644\); chmod 600/);
  });

  it('uses SLESS_JWT_SECRET when it is set, and keeps no file', async () => {
    const dataDir = path.join(root, 'data-env');
    const dev = await start(dataDir, { SLESS_JWT_SECRET: 'x'.repeat(32) });
    try {
      assert.equal(await functionsWith(dev.url, dev.adminToken), 200);
      await assert.rejects(stat(path.join(dataDir, 'jwt-secret')), { code: 'ENOENT' });
    } finally {
      await dev.close();
    }
  });
});
