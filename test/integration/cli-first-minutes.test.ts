// What a new user types first: `sless --version`, and a mistyped flag.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sless = (...args: string[]) => spawnSync(process.execPath, [path.join(root, 'bin/sless.js'), ...args], { encoding: 'utf8', timeout: 60_000 });

it('sless --version prints the package version', () => {
  const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const r = sless('--version');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `sless ${version}\n`);
});

it('a mistyped flag gets a readable message with the closest flag', () => {
  const r = sless('dev', '--prot', '80');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^sless dev: unknown flag --prot; did you mean --port\?/);
});
