import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest } from '../manifest/parse-manifest.ts';
import type { FunctionManifest } from '../manifest/types.ts';
import type { FunctionEntry, Snapshot } from '../source/types.ts';
import { planPreview } from './preview-plan.ts';
import { previewStatus, refusedStatus } from './preview-status.ts';

const hash = (c: string) => `sha256:${c.repeat(64)}`;

function fn(name: string, code = 'a', m: Partial<FunctionManifest> = {}): FunctionEntry {
  const parsed = parseManifest('runtime: nodejs20', { file: 'function.yaml', dirName: name });
  assert.ok(parsed.manifest);
  return { name, path: `functions/${name}`, manifest: { ...parsed.manifest, ...m }, codeHash: hash(code), problems: [] };
}

const snap = (revision: string, ...functions: FunctionEntry[]): Snapshot => ({ revision, functions });

describe('which functions a preview builds: the PR head against its merge base', () => {
  const base = snap('base', fn('alpha'), fn('beta'), fn('gamma'), fn('delta'));

  it('changed code or config → built (with why); untouched → production; added → built; deleted → removed', () => {
    const head = snap('head', fn('alpha', 'b'), fn('beta', 'a', { timeoutSec: 99 }), fn('gamma'), fn('epsilon'));
    const plan = planPreview(base, head);
    assert.deepEqual(
      plan.functions.map((f) => [f.name, f.state, f.reasons ?? []]),
      [
        ['alpha', 'built', ['code_hash']],
        ['beta', 'built', ['timeout_sec']],
        ['delta', 'removed', []],
        ['epsilon', 'built', ['added']],
        ['gamma', 'production', []],
      ],
    );
    assert.deepEqual(plan.build.map((e) => e.name), ['alpha', 'beta', 'epsilon']);
  });

  it('main moving on after the merge base changes nothing: only the PR diff counts', () => {
    // The merge base is what the PR branched from; whatever main has now is not an input at all.
    const plan = planPreview(base, snap('head', fn('alpha'), fn('beta'), fn('gamma'), fn('delta')));
    assert.deepEqual(plan.build, []);
    assert.ok(plan.functions.every((f) => f.state === 'production'));
  });

  it('a function.yaml the PR breaks → failed, with file:line', () => {
    const broken: FunctionEntry = { name: 'alpha', path: 'functions/alpha', problems: [{ file: 'functions/alpha/function.yaml', line: 2, key: 'memory_mb', message: 'not a number' }] };
    const plan = planPreview(base, snap('head', broken, fn('beta'), fn('gamma'), fn('delta')));
    const alpha = plan.functions.find((f) => f.name === 'alpha');
    assert.equal(alpha?.state, 'failed');
    assert.match(alpha?.error ?? '', /functions\/alpha\/function\.yaml:2/);
  });

  it('a PR that deletes every function folder removes them all in its preview', () => {
    const plan = planPreview(base, snap('head'));
    assert.deepEqual(plan.functions.map((f) => f.state), ['removed', 'removed', 'removed', 'removed']);
  });
});

describe('the sless/preview commit status', () => {
  const fns = [
    { name: 'alpha', state: 'built' as const, deploy: { kind: 'serving' as const } },
    { name: 'beta', state: 'built' as const, deploy: { kind: 'serving' as const } },
    ...['c', 'd', 'e', 'f', 'g'].map((name) => ({ name, state: 'production' as const })),
  ];

  it('success: "2 built, 5 from production", linked to the preview namespace in the console', () => {
    assert.deepEqual(previewStatus({ namespace: 'team-pr-4', functions: fns, consoleBaseUrl: 'http://sless.test/' }), {
      context: 'sless/preview',
      state: 'success',
      description: '2 built, 5 from production',
      targetUrl: 'http://sless.test/funcs/team-pr-4',
    });
  });

  it('pending while a changed function builds', () => {
    const s = previewStatus({ namespace: 'team-pr-4', functions: [{ ...fns[0]!, deploy: { kind: 'pending', message: 'building' } }, ...fns.slice(1)] });
    assert.deepEqual([s.state, s.description], ['pending', 'building 1 of 2 changed functions']);
  });

  it('failure names the function and why', () => {
    const s = previewStatus({ namespace: 'team-pr-4', functions: [{ ...fns[1]!, deploy: { kind: 'failed', message: 'npm ci failed\nlog...' } }, ...fns] });
    assert.deepEqual([s.state, s.description], ['failure', 'beta: npm ci failed']);
  });

  it('removed functions are counted when there are any; a refusal is a failure with the reason', () => {
    assert.equal(previewStatus({ namespace: 'x', functions: [{ name: 'a', state: 'removed' }] }).description, '0 built, 0 from production, 1 removed');
    assert.deepEqual(refusedStatus('pull requests from forks are not built'), { context: 'sless/preview', state: 'failure', description: 'pull requests from forks are not built' });
  });
});
