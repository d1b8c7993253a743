import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest } from '../manifest/parse-manifest.ts';
import { formatProblem } from '../manifest/format-problem.ts';
import { DEFAULT_CONCURRENCY, parseIdle, resolveScale, SCALE_DEFAULTS, scaleProblems } from './scale-spec.ts';

const FILE = 'functions/hello/function.yaml';
const parse = (text: string, maxReplicas?: number) =>
  parseManifest(text, { file: FILE, dirName: 'hello', ...(maxReplicas === undefined ? {} : { maxReplicas }) });

describe('scale: defaults', () => {
  it('a function that says nothing keeps one replica for ever (min 1), as before scale existed', () => {
    const s = resolveScale(undefined, 'nodejs20');
    assert.deepEqual(s, { min: 1, max: 10, concurrency: 50, idle: '5m', idleMs: 300_000 });
  });
  it('concurrency follows the runtime while it is left out', () => {
    assert.equal(resolveScale({ min: 0 }, 'python3.12').concurrency, DEFAULT_CONCURRENCY['python3.12']);
    assert.equal(resolveScale({ min: 0 }, 'go1.23').concurrency, DEFAULT_CONCURRENCY['go1.23']);
    assert.equal(resolveScale({ concurrency: 3 }, 'python3.12').concurrency, 3);
  });
  it('the default max never exceeds the namespace cap', () => {
    assert.equal(resolveScale({}, 'nodejs20', 4).max, 4);
    assert.equal(resolveScale({}, 'nodejs20', 50).max, SCALE_DEFAULTS.max);
  });
});

describe('scale: idle durations', () => {
  for (const [text, ms] of [
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['2m15s', 135_000],
    ['', undefined],
    ['5', undefined],
    ['5 minutes', undefined],
    ['1.5m', undefined],
  ] as const) {
    it(`"${text}" -> ${ms}`, () => assert.equal(parseIdle(text), ms));
  }
});

describe('scale: rules', () => {
  const cases: Array<[string, Record<string, unknown>, number | undefined, string[]]> = [
    ['all fields valid', { min: 0, max: 5, concurrency: 10, idle: '30s' }, undefined, []],
    ['min above max', { min: 4, max: 2 }, undefined, ['min: min (4) is above max (2)']],
    ['min above the default max', { min: 12 }, undefined, ['min: min (12) is above the default max (10)']],
    ['concurrency below 1', { concurrency: 0 }, undefined, ['concurrency: must be from 1']],
    ['idle below the floor', { idle: '5s' }, undefined, ['idle: 5s is below the floor of 10s']],
    ['idle not a duration', { idle: 'soon' }, undefined, ['idle: "soon" is not a duration']],
    ['max over the cap', { max: 30 }, 20, ["max: 30 is over this namespace's cap of 20"]],
    ['max at the cap', { max: 20 }, 20, []],
    ['max 0', { max: 0 }, undefined, ['max: must be at least 1']],
  ];
  for (const [what, input, cap, want] of cases) {
    it(what, () => {
      const got = scaleProblems(input, cap).map((p) => `${p.key}: ${p.message}`);
      assert.equal(got.length, want.length, JSON.stringify(got));
      want.forEach((w, i) => assert.ok(got[i]?.startsWith(w), `${got[i]} should start with ${w}`));
    });
  }
});

describe('scale in function.yaml', () => {
  it('is read as written; fields left out stay out', () => {
    const r = parse('runtime: nodejs20\nscale:\n  min: 0\n  idle: 10s\n');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.manifest?.scale, { min: 0, idle: '10s' });
  });
  it('is absent from a file without it (old functions behave as today)', () => {
    assert.equal(parse('runtime: nodejs20\n').manifest?.scale, undefined);
  });
  it('every bad value is a file:line problem, all in one pass', () => {
    const text = ['runtime: nodejs20', 'scale:', '  min: 3', '  max: 2', '  concurrency: 0', '  idle: 1s', ''].join('\n');
    const r = parse(text);
    assert.equal(r.manifest, undefined);
    assert.deepEqual(r.problems.map(formatProblem), [
      `${FILE}:3: scale.min: min (3) is above max (2); raise max or lower min`,
      `${FILE}:5: scale.concurrency: must be from 1 to 10000 requests in flight per replica`,
      `${FILE}:6: scale.idle: 1s is below the floor of 10s`,
    ]);
  });
  it('max over the namespace cap names the setting', () => {
    const r = parse('runtime: nodejs20\nscale:\n  max: 8\n', 5);
    assert.deepEqual(r.problems.map(formatProblem), [
      `${FILE}:3: scale.max: 8 is over this namespace's cap of 5 replicas (SLESS_MAX_REPLICAS)`,
    ]);
  });
  it('wrong types and unknown keys are problems too', () => {
    const r = parse('runtime: nodejs20\nscale:\n  min: one\n  maximum: 3\n');
    assert.deepEqual(
      r.problems.map((p) => [p.line, p.key]),
      [
        [3, 'scale.min'],
        [4, 'scale.maximum'],
      ],
    );
  });
});
