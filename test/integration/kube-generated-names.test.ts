// Issue 31 item 8 across repositories, against the real API server and git server: function `a` job
// `b-c` of one repository and function `a-b` job `c` of another are both FunctionJob `a-b-c`. Within one
// repository both functions are refused (find-duplicate-names.ts); across repositories the one that
// comes second is refused, naming the first, and the first one's object is left as it is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/kube.ts';
import { nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';

/** nodeFunction's files under `folder/` instead of `functions/`. */
const under = (folder: string, files: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(files).map(([p, v]) => [p.replace(/^functions\//, `${folder}/`), v])) as ReturnType<typeof nodeFunction>;

describe('generated names that two repositories would share', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-gen-names');
    await kit.clone.write({
      ...under('team-a', nodeFunction('a', { yaml: 'jobs: [{name: b-c, run_id: 1}]\n' })),
      ...under('team-b', nodeFunction('a-b', { yaml: 'jobs: [{name: c, run_id: 1}]\n' })),
    });
    await kit.clone.commitAndPush('two repositories whose jobs map to one name');
    await kit.startController();
  });
  after(() => kit?.dispose());

  it('refuses the second repository’s function, naming the first, and leaves the first one’s FunctionJob as it is', async () => {
    await kit.createRepository('one', { path: 'team-a' });
    await eventually(async () => assert.equal((await kit.getFunctionJob('a-b-c'))?.spec?.functionRef, 'a'), { timeoutMs: 60_000 });
    await kit.createRepository('two', { path: 'team-b' });
    const entry = await eventually(async () => {
      const r = await kit.getRepository('two');
      const e = r.status?.functions?.find((f) => f.name === 'a-b');
      assert.ok(e?.error, JSON.stringify(r.status));
      return e;
    }, { timeoutMs: 60_000 });
    assert.match(entry?.error ?? '', /job "c" of function "a-b" becomes FunctionJob "a-b-c", which already exists in .* for function a, managed by repository one; rename one of them/);
    assert.equal((await kit.getFunctionJob('a-b-c'))?.spec?.functionRef, 'a', 'the first one’s object is not taken over');
    assert.equal(await kit.getFunction('a-b'), undefined, 'nothing of the refused function is applied');
  });
});
