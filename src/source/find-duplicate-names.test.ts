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

  it('function a job b-c and function a-b job c would both be FunctionJob a-b-c: both refused, naming each other (issue 31 item 8)', () => {
    const entries = [
      entry('fns/a', 'runtime: go1.23\njobs: [{name: b-c, run_id: 1}]'),
      entry('fns/a-b', 'runtime: go1.23\njobs: [{name: c, run_id: 1}]'),
      entry('fns/fine', 'runtime: go1.23\njobs: [{name: c, run_id: 1}]'),
    ];
    const [a, ab, fine] = findDuplicateNames(entries);
    assert.equal(a?.manifest, undefined);
    assert.equal(ab?.manifest, undefined);
    assert.deepEqual(a?.problems.map(formatProblem), [
      'fns/a/function.yaml: jobs[0].name: job "b-c" of function "a" becomes FunctionJob "a-b-c", the same name as job "c" of function "a-b" (fns/a-b/function.yaml); rename one: neither is deployed until then',
    ]);
    assert.deepEqual(ab?.problems.map(formatProblem), [
      'fns/a-b/function.yaml: jobs[0].name: job "c" of function "a-b" becomes FunctionJob "a-b-c", the same name as job "b-c" of function "a" (fns/a/function.yaml); rename one: neither is deployed until then',
    ]);
    assert.deepEqual(fine, entries[2], 'the rest is unaffected');
  });

  it('schedule http of x and the http trigger of x-cron would both be Trigger x-cron-http: both refused (issue 31 item 8)', () => {
    const entries = [
      entry('fns/x', 'runtime: go1.23\nschedules: [{name: http, cron: "@daily"}]'),
      entry('fns/x-cron', 'runtime: go1.23'),
    ];
    const [x, xCron] = findDuplicateNames(entries);
    assert.equal(x?.manifest, undefined);
    assert.equal(xCron?.manifest, undefined);
    assert.deepEqual(x?.problems.map(formatProblem), [
      'fns/x/function.yaml: schedules[0].name: schedule "http" of function "x" becomes Trigger "x-cron-http", the same name as the http trigger of function "x-cron" (fns/x-cron/function.yaml); rename one: neither is deployed until then',
    ]);
    assert.deepEqual(xCron?.problems.map(formatProblem), [
      'fns/x-cron/function.yaml: http: the http trigger of function "x-cron" becomes Trigger "x-cron-http", the same name as schedule "http" of function "x" (fns/x/function.yaml); rename one: neither is deployed until then',
    ]);
  });

  it('the common names are kept: <fn>-http, <fn>-cron-<schedule>, <fn>-<job> side by side do not clash', () => {
    const entries = [
      entry('fns/api', 'runtime: go1.23\nschedules: [{name: nightly, cron: "@daily"}]\njobs: [{name: seed, run_id: 1}, {name: http, run_id: 1}]'),
      entry('fns/api-seed', 'runtime: go1.23'),
    ];
    assert.deepEqual(findDuplicateNames(entries), entries, 'job "http" is a FunctionJob, the http trigger a Trigger: other kinds, no clash');
  });
});

