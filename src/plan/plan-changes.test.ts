import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest } from '../manifest/parse-manifest.ts';
import type { FunctionManifest, Runtime } from '../manifest/types.ts';
import type { FunctionEntry, Snapshot } from '../source/types.ts';
import { planChanges, scopeOfSync, type Plan, type PlanOptions } from './plan-changes.ts';

const HASH_A = `sha256:${'a'.repeat(64)}`;
const HASH_B = `sha256:${'b'.repeat(64)}`;

/** The defaults of a minimal function.yaml, with `changes` on top. */
function manifest(name: string, changes: Partial<FunctionManifest> = {}): FunctionManifest {
  const parsed = parseManifest('runtime: nodejs20', { file: 'function.yaml', dirName: name });
  assert.ok(parsed.manifest);
  return { ...parsed.manifest, ...changes };
}

/** A healthy function `name` in folder `functions/<name>` unless `path` says otherwise. */
function fn(
  name: string,
  opts: { path?: string; hash?: string; m?: Partial<FunctionManifest> } = {},
): FunctionEntry {
  return {
    name,
    path: opts.path ?? `functions/${name}`,
    manifest: manifest(name, opts.m),
    codeHash: opts.hash ?? HASH_A,
    problems: [],
  };
}

/** A folder whose function.yaml is broken; its entry name is whatever the source layer could read. */
function broken(name: string, path = `functions/${name}`): FunctionEntry {
  return {
    name,
    path,
    problems: [{ file: `${path}/function.yaml`, line: 1, key: '', message: 'YAML syntax' }],
  };
}

const snap = (...functions: FunctionEntry[]): Snapshot => ({ revision: 'r', functions });

type Outcome = Partial<
  Record<'added' | 'rebuild' | 'redeploy' | 'removed' | 'unchanged' | 'errors', string[]>
>;

function names(plan: Plan): Outcome {
  const out: Outcome = {};
  for (const key of ['added', 'rebuild', 'redeploy', 'removed', 'unchanged', 'errors'] as const) {
    if (plan[key].length > 0) out[key] = plan[key].map((e) => e.name);
  }
  return out;
}

describe('planChanges: what happens to each function', () => {
  const cases: Array<{
    name: string;
    prev?: Snapshot;
    next: Snapshot;
    want: Outcome;
    reasons?: Record<string, string[]>;
    opts?: PlanOptions;
  }> = [
    {
      name: 'first sync: everything healthy is added',
      next: snap(fn('a'), fn('b')),
      want: { added: ['a', 'b'] },
    },
    { name: 'nothing changed', prev: snap(fn('a')), next: snap(fn('a')), want: { unchanged: ['a'] } },
    {
      name: 'code changed: rebuild',
      prev: snap(fn('a')),
      next: snap(fn('a', { hash: HASH_B })),
      want: { rebuild: ['a'] },
      reasons: { a: ['code_hash'] },
    },
    {
      name: 'runtime changed: rebuild',
      prev: snap(fn('a')),
      next: snap(fn('a', { m: { runtime: 'nodejs22' } })),
      want: { rebuild: ['a'] },
      reasons: { a: ['runtime'] },
    },
    {
      name: 'only env changed: redeploy, no rebuild',
      prev: snap(fn('a', { m: { env: { GREETING: 'hello' } } })),
      next: snap(fn('a', { m: { env: { GREETING: 'privet' } } })),
      want: { redeploy: ['a'] },
      reasons: { a: ['env'] },
    },
    {
      name: 'env keys in another order: unchanged',
      prev: snap(fn('a', { m: { env: { A: '1', B: '2' } } })),
      next: snap(fn('a', { m: { env: { B: '2', A: '1' } } })),
      want: { unchanged: ['a'] },
    },
    {
      name: 'memory, timeout, http, schedules, jobs: redeploy with every reason named',
      prev: snap(fn('a')),
      next: snap(
        fn('a', {
          m: {
            memoryMb: 256,
            timeoutSec: 60,
            http: { enabled: false },
            schedules: [{ name: 'nightly', cron: '0 3 * * *' }],
            jobs: [{ name: 'seed', runId: 1 }],
          },
        }),
      ),
      want: { redeploy: ['a'] },
      reasons: { a: ['memory_mb', 'timeout_sec', 'http', 'schedules', 'jobs'] },
    },
    {
      name: 'a job whose run_id grew: redeploy (the job runs again)',
      prev: snap(fn('a', { m: { jobs: [{ name: 'seed', runId: 1 }] } })),
      next: snap(fn('a', { m: { jobs: [{ name: 'seed', runId: 2 }] } })),
      want: { redeploy: ['a'] },
      reasons: { a: ['jobs'] },
    },
    {
      name: 'entrypoint changed: redeploy (the runtime reads it at start)',
      prev: snap(fn('a')),
      next: snap(fn('a', { m: { entrypoint: 'api.main' } })),
      want: { redeploy: ['a'] },
      reasons: { a: ['entrypoint'] },
    },
    {
      name: 'code and config changed together: rebuild, reasons name both',
      prev: snap(fn('a')),
      next: snap(fn('a', { hash: HASH_B, m: { memoryMb: 512 } })),
      want: { rebuild: ['a'] },
      reasons: { a: ['code_hash', 'memory_mb'] },
    },
    {
      name: 'folder moved, same name and code: redeploy only (the source path is recorded), never a rebuild',
      prev: snap(fn('a', { path: 'functions/a' })),
      next: snap(fn('a', { path: 'services/a-renamed' })),
      want: { redeploy: ['a'] },
      reasons: { a: ['path'] },
    },
    {
      name: 'name changed in place: the new name is added, the old one removed',
      prev: snap(fn('old', { path: 'functions/x' })),
      next: snap(fn('new', { path: 'functions/x' })),
      want: { added: ['new'], removed: ['old'] },
    },
    {
      name: 'folder deleted: removed',
      prev: snap(fn('a'), fn('b')),
      next: snap(fn('a')),
      want: { unchanged: ['a'], removed: ['b'] },
    },
    {
      name: 'manifest broke: an error, never removed',
      prev: snap(fn('a'), fn('b')),
      next: snap(fn('a'), broken('b')),
      want: { unchanged: ['a'], errors: ['b'] },
    },
    {
      name: 'manifest broke so badly its name is unreadable: the folder still protects the function',
      prev: snap(fn('api', { path: 'functions/backend' })),
      next: snap(broken('backend', 'functions/backend')),
      want: { errors: ['backend'] },
    },
    {
      name: 'a new folder that is broken: an error, nothing added',
      prev: snap(fn('a')),
      next: snap(fn('a'), broken('c')),
      want: { unchanged: ['a'], errors: ['c'] },
    },
    {
      name: 'two folders with one name: both errors, the running one is kept, others unaffected',
      prev: snap(fn('a'), fn('b')),
      next: snap(fn('a'), fn('b'), fn('b', { path: 'functions/copy-of-b' })),
      want: { unchanged: ['a'], errors: ['b', 'b'] },
    },
    {
      name: 'a code hash that could not be computed is an error',
      prev: snap(fn('a')),
      next: snap({ ...fn('a'), codeHash: undefined }),
      want: { errors: ['a'] },
    },
    {
      name: 'a broken entry in a raw previous snapshot stands for nothing running',
      prev: snap(broken('a')),
      next: snap(fn('a')),
      want: { added: ['a'] },
    },
    {
      name: 'base image changed for the runtime: rebuild its functions only',
      prev: snap(fn('a'), fn('p', { m: { runtime: 'python3.12' } })),
      next: snap(fn('a'), fn('p', { m: { runtime: 'python3.12' } })),
      opts: {
        baseImageOf: (r: Runtime) => (r === 'nodejs20' ? 'node@sha256:new' : 'python@sha256:same'),
        prevBaseImages: { nodejs20: 'node@sha256:old', 'python3.12': 'python@sha256:same' },
      },
      want: { rebuild: ['a'], unchanged: ['p'] },
      reasons: { a: ['base_image'] },
    },
    {
      name: 'base image unknown before (first plan after a restart): no mass rebuild',
      prev: snap(fn('a')),
      next: snap(fn('a')),
      opts: { baseImageOf: () => 'node@sha256:new' },
      want: { unchanged: ['a'] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planChanges(c.prev, c.next, c.opts);
      assert.deepEqual(names(plan), c.want);
      assert.deepEqual(plan.reasons, c.reasons ?? {});
    });
  }
});

describe('planChanges: carrying the running state forward', () => {
  it('a function that broke and is fixed with new code is rebuilt against its last good version', () => {
    const good = snap(fn('a', { hash: HASH_A }));
    const whileBroken = planChanges(good, snap(broken('a')));
    assert.deepEqual(
      whileBroken.applied.functions.map((e) => e.codeHash),
      [HASH_A],
    );
    const fixed = planChanges(whileBroken.applied, snap(fn('a', { hash: HASH_B })));
    assert.deepEqual(names(fixed), { rebuild: ['a'] });
  });

  it('fixed with the same code and config as before it broke: unchanged', () => {
    const whileBroken = planChanges(snap(fn('a')), snap(broken('a')));
    assert.deepEqual(names(planChanges(whileBroken.applied, snap(fn('a')))), { unchanged: ['a'] });
  });

  it('applied holds the healthy next entries plus the kept ones, at the next revision', () => {
    const plan = planChanges(snap(fn('a'), fn('b'), fn('gone')), {
      revision: 'r2',
      functions: [fn('a'), broken('b'), fn('c')],
    });
    assert.equal(plan.applied.revision, 'r2');
    assert.deepEqual(plan.applied.functions.map((e) => e.name).sort(), ['a', 'b', 'c']);
  });

  it('records the base image of every runtime in use for the next plan', () => {
    const plan = planChanges(undefined, snap(fn('a')), {
      baseImageOf: (r) => `${r}@sha256:1`,
      prevBaseImages: { 'go1.23': 'go@sha256:0' },
    });
    assert.deepEqual(plan.baseImages, { nodejs20: 'nodejs20@sha256:1', 'go1.23': 'go@sha256:0' });
  });

  it('a previous state stored as JSON and read back compares equal to freshly parsed manifests', () => {
    const yaml = [
      'runtime: nodejs20',
      'env: {A: "1"}',
      'schedules:',
      '  - {name: n, cron: "0 3 * * *", event: {kind: nightly, list: [1, {x: null}]}}',
      'jobs:',
      '  - {name: j, run_id: 2, event: {input: [100, 200]}}',
    ].join('\n');
    const parsed = parseManifest(yaml, { file: 'functions/a/function.yaml', dirName: 'a' }).manifest;
    assert.ok(parsed);
    const entry: FunctionEntry = {
      name: 'a',
      path: 'functions/a',
      manifest: parsed,
      codeHash: HASH_A,
      problems: [],
    };
    const stored = JSON.parse(JSON.stringify(planChanges(undefined, snap(entry)).applied)) as Snapshot;
    assert.deepEqual(names(planChanges(stored, snap(entry))), { unchanged: ['a'] });
  });

  it('is pure: the snapshots passed in are not changed', () => {
    const prev = snap(fn('a'), fn('b'));
    const next = snap(fn('a', { hash: HASH_B }), broken('b'));
    const copies = structuredClone([prev, next]);
    planChanges(prev, next);
    assert.deepEqual([prev, next], copies);
  });
});

describe('scopeOfSync: the safety rules both platforms execute', () => {
  const running = (name: string, path = `functions/${name}`) => ({ name, path });

  it('removes a running function whose folder is gone, and nothing that still has a healthy folder', () => {
    const scope = scopeOfSync([running('a'), running('gone')], [fn('a')]);
    assert.deepEqual(scope.removed.map((r) => r.name), ['gone']);
    assert.equal(scope.emptySource, false);
  });

  it('keeps what a broken folder was, found by its readable name or by its folder', () => {
    // "b" still reads as b; the folder of "c" lost its name (the source layer names it by the folder).
    const scope = scopeOfSync([running('b'), running('c'), running('gone')], [broken('b'), broken('c-dir', 'functions/c')]);
    assert.deepEqual([...scope.kept].sort(), ['b', 'c', 'c-dir']);
    assert.deepEqual(scope.removed.map((r) => r.name), ['gone']);
  });

  it('removes nothing when the source has no function folder at all while functions run', () => {
    const scope = scopeOfSync([running('a'), running('b')], []);
    assert.deepEqual(scope, { kept: new Set(), removed: [], emptySource: true });
    // Nothing running and nothing in the source: no refusal, nothing to do.
    assert.equal(scopeOfSync([], []).emptySource, false);
  });

  it('planChanges follows them: an emptied source removes nothing and keeps what ran', () => {
    const plan = planChanges(snap(fn('a'), fn('b')), snap());
    assert.equal(plan.emptySource, true);
    assert.deepEqual(plan.removed, []);
    assert.deepEqual(plan.applied.functions.map((e) => e.name), ['a', 'b']);
  });
});
