// `bin/sless.js` on a Node older than package.json's engines: one line naming both versions, exit 2,
// before the bundle or tsx is loaded (on Node 20 they crashed with a screen of minified code).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeVersionProblem } from '../../bin/node-version.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const engines = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

/** A Node on PATH outside node_modules (the machine's own), with its version. */
function systemNodes(): Array<{ bin: string; version: string }> {
  const found: Array<{ bin: string; version: string }> = [];
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/local/bin'])) {
    if (!dir || dir.includes('node_modules')) continue;
    const bin = path.join(dir, 'node');
    try {
      const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
      if (!found.some((f) => f.version === version)) found.push({ bin, version });
    } catch {
      // no node there
    }
  }
  return found;
}

describe('the Node version guard of bin/sless.js', () => {
  it('names the version needed (from package.json engines) and the one found', () => {
    assert.equal(engines, '>=22.19.0');
    assert.equal(
      nodeVersionProblem('20.20.2', engines),
      'sless needs Node.js >= 22.19.0 (package.json engines); this is Node.js 20.20.2 (node --version). Install Node.js 22.19 or newer.',
    );
    assert.match(nodeVersionProblem('22.18.9', engines) ?? '', /needs Node.js >= 22\.19\.0.*this is Node\.js 22\.18\.9/);
    assert.equal(nodeVersionProblem('22.19.0', engines), undefined);
    assert.equal(nodeVersionProblem('22.23.3', engines), undefined);
    assert.equal(nodeVersionProblem('24.0.0', engines), undefined);
  });

  it('on an older Node, `sless --help` prints that one line and exits 2', (t) => {
    const old = systemNodes().find((n) => nodeVersionProblem(n.version, engines) !== undefined);
    if (!old) {
      t.skip('no Node older than the engines range outside node_modules on this machine');
      return;
    }
    const r = spawnSync(old.bin, [path.join(root, 'bin/sless.js'), '--help'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `${nodeVersionProblem(old.version, engines)}\n`);
  });

  it('on this Node (npm scripts), the command runs', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/sless.js'), '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage:/);
  });
});
