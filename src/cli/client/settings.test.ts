import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { namespaceForSubject } from '../../auth/namespace-for-subject.ts';
import { clientEnv } from '../../config/client-env.ts';
import { configFile, resolveTarget, storeLogin } from './settings.ts';
import { tokenNamespace } from './token-namespace.ts';

const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'sless-cli-settings-'));
  dirs.push(d);
  return d;
}

test("the namespace is the token's own, derived as the server does, without verifying the token", () => {
  assert.equal(tokenNamespace(jwt({ sub: 'alice@example.com' })), namespaceForSubject('alice@example.com'));
  assert.throws(() => tokenNamespace('not-a-jwt'), /not a JWT/);
  assert.throws(
    () => tokenNamespace(jwt({ admin: true })),
    /no "sub" claim.*-n\/--namespace or SLESS_NAMESPACE/,
  );
});

test('SLESS_ENDPOINT and SLESS_API_TOKEN; -n wins over SLESS_NAMESPACE, which wins over the token', async () => {
  const token = jwt({ sub: 'bob' });
  const env = clientEnv({
    SLESS_ENDPOINT: 'http://localhost:8080/',
    SLESS_API_TOKEN: token,
    XDG_CONFIG_HOME: '/nonexistent',
  });
  assert.deepEqual(await resolveTarget(env, undefined), {
    endpoint: 'http://localhost:8080',
    token,
    namespace: namespaceForSubject('bob'),
  });
  assert.equal((await resolveTarget({ ...env, namespace: 'dev' }, undefined)).namespace, 'dev');
  assert.equal((await resolveTarget({ ...env, namespace: 'dev' }, 'other')).namespace, 'other');
  await assert.rejects(resolveTarget({ ...env, endpoint: 'ftp://x' }, undefined), /is not an http\(s\) URL/);
});

test('without settings, the error says how to give them', async () => {
  const env = clientEnv({ XDG_CONFIG_HOME: await tmp() });
  await assert.rejects(resolveTarget(env, undefined), {
    message:
      'no endpoint configured; set SLESS_ENDPOINT and SLESS_API_TOKEN, or run sless login --endpoint URL --token-file FILE',
  });
});

test('login stores endpoint and token 0600 under $XDG_CONFIG_HOME/sless; a file others can read is refused', async () => {
  const env = clientEnv({ XDG_CONFIG_HOME: await tmp() });
  const token = jwt({ sub: 'carol' });
  const file = await storeLogin(env, { endpoint: 'https://sless.example.com', token });
  assert.equal(file, configFile(env));
  assert.equal(file, path.join(env.configDir, 'config.json'));
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.equal((await stat(env.configDir)).mode & 0o777, 0o700);
  assert.deepEqual(await resolveTarget(env, undefined), {
    endpoint: 'https://sless.example.com',
    token,
    namespace: namespaceForSubject('carol'),
  });
  await chmod(file, 0o644);
  await assert.rejects(resolveTarget(env, undefined), {
    message: `${file} can be read by other users (mode 644); run chmod 600 ${file}`,
  });
  await writeFile(file, 'not json', { mode: 0o600 });
  await chmod(file, 0o600);
  await assert.rejects(resolveTarget(env, undefined), /cannot read .*config.json: .*run sless login again/);
});

test('without XDG_CONFIG_HOME the folder is ~/.config/sless', () => {
  assert.equal(clientEnv({ HOME: '/home/u' }).configDir, '/home/u/.config/sless');
});
