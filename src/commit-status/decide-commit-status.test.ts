import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideCommitStatuses, isFinal, type RevisionFunction } from './decide-commit-status.ts';

const REV = '0123456789abcdef0123456789abcdef01234567';
const serving = (name: string, path = name): RevisionFunction => ({ name, path, state: { kind: 'serving' } });
const pending = (name: string, message = 'building'): RevisionFunction => ({ name, path: name, state: { kind: 'pending', message } });
const failed = (name: string, message: string, path = name): RevisionFunction => ({ name, path, state: { kind: 'failed', message } });
const decide = (functions: RevisionFunction[], extra: { postedContexts?: string[]; consoleBaseUrl?: string } = {}) =>
  decideCommitStatuses({ revision: REV, namespace: 'team-a', functions, consoleBaseUrl: 'https://fn.example.com/', ...extra });

describe('decideCommitStatuses', () => {
  it('a newer commit of a pinned function built but is not live: the repository and the function context say so', () => {
    const pinned: RevisionFunction = { name: 'b', path: 'b', state: { kind: 'pinned', revision: 3 } };
    const statuses = decide([serving('a'), pinned]);
    assert.deepEqual(statuses, [
      {
        context: 'sless',
        state: 'success',
        description: '0123456789ab built; pinned by a rollback, not live: b (revision 3); undo the rollback to serve it',
        targetUrl: 'https://fn.example.com/funcs/team-a',
      },
      {
        context: 'sless/b',
        state: 'success',
        description: 'built, not live: pinned to revision 3 by a rollback; undo it (sless rollback --undo) to serve this commit',
        targetUrl: 'https://fn.example.com/funcs/team-a/source/b',
      },
    ]);
    assert.ok(isFinal(statuses));
    // A failure elsewhere still wins the repository context.
    assert.equal(decide([failed('a', 'build failed'), pinned])[0]?.state, 'failure');
  });

  it('success on the repository context when every function serves the revision; no per-function contexts', () => {
    const statuses = decide([serving('a'), serving('b')]);
    assert.deepEqual(statuses, [
      { context: 'sless', state: 'success', description: '2 functions serve 0123456789ab', targetUrl: 'https://fn.example.com/funcs/team-a' },
    ]);
    assert.ok(isFinal(statuses));
  });

  it('pending while a function builds or rolls out, naming it when it is the only one', () => {
    assert.deepEqual(decide([serving('a'), pending('b', 'building image')])[0], {
      context: 'sless',
      state: 'pending',
      description: 'b: building image',
      targetUrl: 'https://fn.example.com/funcs/team-a',
    });
    assert.equal(decide([pending('a'), pending('b'), serving('c')])[0]?.description, '2 of 3 functions building or rolling out');
    assert.ok(!isFinal(decide([pending('a')])));
  });

  it('failure with the first error by path (a broken function.yaml: file:line), one context per failed function, linked to its console page', () => {
    const statuses = decide([
      failed('zeta', 'build failed: pip install exited 1', 'a/zeta'),
      failed('hello', 'b/hello/function.yaml:3: runtime: must be one of python3.11, ...', 'b/hello'),
      pending('other'),
    ]);
    assert.deepEqual(statuses, [
      { context: 'sless', state: 'failure', description: 'zeta: build failed: pip install exited 1 (+1 more failed)', targetUrl: 'https://fn.example.com/funcs/team-a/source/zeta' },
      { context: 'sless/zeta', state: 'failure', description: 'build failed: pip install exited 1', targetUrl: 'https://fn.example.com/funcs/team-a/source/zeta' },
      { context: 'sless/hello', state: 'failure', description: 'b/hello/function.yaml:3: runtime: must be one of python3.11, ...', targetUrl: 'https://fn.example.com/funcs/team-a/source/hello' },
    ]);
  });

  it("a build's failure is described by its first line (the log tail stays in the console), cut to 140 characters", () => {
    const [repo] = decide([failed('a', `\nbuild failed: ${'x'.repeat(300)}\nstep 3/7 ...\nerror: ...`)]);
    assert.ok(repo);
    assert.equal(repo.description.length, 140);
    assert.match(repo.description, /^a: build failed: x+…$/);
  });

  it('a function context posted as failed earlier is set back when the function serves (or builds again) in the same revision', () => {
    const statuses = decide([serving('a'), pending('b')], { postedContexts: ['sless', 'sless/a', 'sless/b', 'sless/gone'] });
    assert.deepEqual(
      statuses.map((s) => [s.context, s.state, s.description]),
      [
        ['sless', 'pending', 'b: building'],
        ['sless/a', 'success', 'serves 0123456789ab'],
        ['sless/b', 'pending', 'building'],
        ['sless/gone', 'success', 'no longer part of 0123456789ab'],
      ],
    );
  });

  it('without a public base URL there is no link; an empty revision is a success with zero functions', () => {
    const [s] = decide([], { consoleBaseUrl: undefined });
    assert.deepEqual(s, { context: 'sless', state: 'success', description: '0 functions serve 0123456789ab' });
  });
});
