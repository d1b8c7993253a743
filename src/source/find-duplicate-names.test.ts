import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FunctionEntry } from './types.ts';
import { findDuplicateNames } from './find-duplicate-names.ts';
import { formatProblem } from '../manifest/format-problem.ts';
import { parseManifest } from '../manifest/parse-manifest.ts';

/** An entry as the source layer builds it: parsed from `yaml` in folder `path`. */
function entry(path: string, yaml: string): FunctionEntry {
  const dirName = path.slice(path.lastIndexOf('/') + 1);
  const parsed = parseManifest(yaml, { file: `${path}/function.yaml`, dirName });
  const base = { name: parsed.name, path, problems: parsed.problems };
  return parsed.manifest
    ? { ...base, manifest: parsed.manifest, codeHash: `sha256:${'0'.repeat(64)}` }
    : base;
}

describe('findDuplicateNames', () => {
  it('unique names: entries come back untouched', () => {
    const entries = [entry('fns/a', 'runtime: go1.23'), entry('fns/b', 'runtime: go1.23')];
    assert.deepEqual(findDuplicateNames(entries), entries);
  });

  it('two folders with one name: both lose their manifest and name each other, the rest is unaffected', () => {
    const entries = [
      entry('fns/api', 'runtime: go1.23'),
      entry('fns/other', '# the API, take two\nname: api\nruntime: go1.23'),
      entry('fns/fine', 'runtime: go1.23'),
    ];
    const [first, second, fine] = findDuplicateNames(entries);
    assert.equal(first?.manifest, undefined);
    assert.equal(second?.manifest, undefined);
    assert.deepEqual(first?.problems.map(formatProblem), [
      'fns/api/function.yaml: name: function name "api" is also used by fns/other/function.yaml; names must be unique in a repository, so none of them is deployed until one is renamed',
    ]);
    // An explicit name: points at its line; a name taken from the folder has none.
    assert.match(
      formatProblem(second?.problems[0] ?? { file: '', line: 0, key: '', message: '' }),
      /^fns\/other\/function\.yaml:2: name: .*used by fns\/api\/function\.yaml/,
    );
    assert.deepEqual(fine, entries[2]);
  });

  it('three folders: each names the other two', () => {
    const entries = ['a', 'b', 'c'].map((d) => entry(`fns/${d}`, 'name: same\nruntime: go1.23'));
    for (const e of findDuplicateNames(entries)) {
      assert.equal(e.problems.length, 1);
      assert.equal((e.problems[0]?.message.match(/function\.yaml/g) ?? []).length, 2);
    }
  });

  it('a broken folder does not make a healthy namesake a duplicate', () => {
    const entries = [entry('fns/api', 'runtime: go1.23'), entry('fns/x', 'name: api\nruntime: cobol')];
    const [api, broken] = findDuplicateNames(entries);
    assert.deepEqual(api, entries[0]);
    assert.equal(broken?.problems.length, 1);
  });

  it('a function at the repository root is named by its plain function.yaml', () => {
    const root: FunctionEntry = { ...entry('x/api', 'runtime: go1.23'), path: '' };
    const [, other] = findDuplicateNames([root, entry('fns/api', 'runtime: go1.23')]);
    assert.match(other?.problems[0]?.message ?? '', /used by function\.yaml;/);
  });
});
