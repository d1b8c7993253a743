import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { formatProblem } from './format-problem.ts';
import { MAX_MANIFEST_BYTES, parseManifest } from './parse-manifest.ts';
import type { FunctionManifest } from './types.ts';

const FILE = 'functions/hello/function.yaml';
const parse = (text: string, dirName = 'hello') => parseManifest(text, { file: FILE, dirName });
const fixture = (name: string) =>
  readFileSync(new URL(`../../test/fixtures/manifests/${name}`, import.meta.url), 'utf8');

/** [line, key, message pattern] per problem, in order. */
type Want = Array<[number, string, RegExp]>;

function assertProblems(text: string, want: Want, dirName?: string): void {
  const result = parse(text, dirName);
  assert.equal(result.manifest, undefined, 'a file with problems yields no manifest');
  const got = result.problems.map((p) => [p.line, p.key, p.message] as const);
  assert.equal(
    got.length,
    want.length,
    `problems: ${JSON.stringify(result.problems.map(formatProblem), null, 1)}`,
  );
  want.forEach(([line, key, pattern], i) => {
    const [gotLine, gotKey, message] = got[i] ?? [];
    assert.deepEqual([gotLine, gotKey], [line, key], `problem ${i}: ${message}`);
    assert.match(message ?? '', pattern);
  });
  for (const p of result.problems) assert.equal(p.file, FILE);
}

describe('parseManifest: valid files and their defaults', () => {
  it("the contract's example parses cleanly, every field as written", () => {
    const result = parse(fixture('contract-example.yaml'), 'hello-node');
    assert.deepEqual(result.problems, []);
    const want: FunctionManifest = {
      name: 'hello-node',
      runtime: 'nodejs20',
      entrypoint: 'handler.handle',
      memoryMb: 128,
      timeoutSec: 30,
      env: { GREETING: 'hello' },
      envFromSecrets: ['db-credentials'],
      include: ['lib/common'],
      ignore: ['*.test.js', 'fixtures/'],
      http: { enabled: true },
      schedules: [
        { name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Moscow', event: { kind: 'nightly' } },
      ],
      jobs: [{ name: 'seed-db', runId: 1, event: { input: [100, 200, 300] } }],
    };
    assert.deepEqual(result.manifest, want);
  });

  it('only runtime is required; everything else has its contract default', () => {
    assert.deepEqual(parse('runtime: python3.12\n').manifest, {
      name: 'hello',
      runtime: 'python3.12',
      entrypoint: 'handler.handle',
      memoryMb: 128,
      timeoutSec: 30,
      env: {},
      envFromSecrets: [],
      include: [],
      ignore: [],
      http: { enabled: true },
      schedules: [],
      jobs: [],
    });
  });

  const cases: Array<{ name: string; yaml: string; want: Partial<FunctionManifest> }> = [
    { name: 'name defaults to the directory name', yaml: 'runtime: go1.23', want: { name: 'hello' } },
    { name: 'an explicit name wins', yaml: 'name: api-v2\nruntime: go1.23', want: { name: 'api-v2' } },
    {
      name: 'a 53-character name is allowed',
      yaml: `name: ${'a'.repeat(53)}\nruntime: go1.23`,
      want: { name: 'a'.repeat(53) },
    },
    {
      name: 'memory and timeout at their bounds',
      yaml: 'runtime: nodejs22\nmemory_mb: 8192\ntimeout_sec: 900',
      want: { memoryMb: 8192, timeoutSec: 900 },
    },
    {
      name: 'memory and timeout at their lower bounds',
      yaml: 'runtime: nodejs22\nmemory_mb: 64\ntimeout_sec: 1',
      want: { memoryMb: 64, timeoutSec: 1 },
    },
    {
      name: 'env numbers and booleans are kept as the text written',
      yaml: 'runtime: nodejs20\nenv:\n  PORT_HINT: 8080\n  VERSION: 1.10\n  DEBUG: true\n  HEX: 0x1F\n  EMPTY: ""',
      want: { env: { PORT_HINT: '8080', VERSION: '1.10', DEBUG: 'true', HEX: '0x1F', EMPTY: '' } },
    },
    {
      name: 'YAML 1.1 spellings are plain strings (yes stays "yes")',
      yaml: '%YAML 1.1\n---\nruntime: nodejs20\nenv:\n  FLAG: yes\n  DAY: 2026-11-30',
      want: { env: { FLAG: 'yes', DAY: '2026-11-30' } },
    },
    {
      name: 'http can be switched off',
      yaml: 'runtime: nodejs20\nhttp:\n  enabled: false',
      want: { http: { enabled: false } },
    },
    {
      name: 'an empty http mapping keeps the default',
      yaml: 'runtime: nodejs20\nhttp: {}',
      want: { http: { enabled: true } },
    },
    {
      name: 'include paths are normalised',
      yaml: 'runtime: nodejs20\ninclude: ["./lib/common/", "shared//utils", "a/../b"]',
      want: { include: ['lib/common', 'shared/utils', 'b'] },
    },
    {
      name: 'python entrypoint in a package',
      yaml: 'runtime: python3.11\nentrypoint: app.api.handle',
      want: { entrypoint: 'app.api.handle' },
    },
    {
      name: 'node entrypoint in a subfolder with an extension',
      yaml: 'runtime: nodejs20\nentrypoint: src/api.mjs.main',
      want: { entrypoint: 'src/api.mjs.main' },
    },
    {
      name: 'go ignores the entrypoint',
      yaml: 'runtime: go1.23\nentrypoint: whatever',
      want: { entrypoint: 'whatever' },
    },
    {
      name: 'schedules: descriptors, names of months and days, steps, lists',
      yaml: 'runtime: nodejs20\nschedules:\n  - {name: a, cron: "@hourly"}\n  - {name: b, cron: "*/15 9-17 * JAN-MAR mon-fri"}\n  - {name: c, cron: "0 0 1,15 * ?", timezone: UTC}',
      want: {
        schedules: [
          { name: 'a', cron: '@hourly' },
          { name: 'b', cron: '*/15 9-17 * JAN-MAR mon-fri' },
          { name: 'c', cron: '0 0 1,15 * ?', timezone: 'UTC' },
        ],
      },
    },
    {
      name: 'a job with run_id 0 is valid (it does not run)',
      yaml: 'runtime: nodejs20\njobs:\n  - name: seed\n    run_id: 0',
      want: { jobs: [{ name: 'seed', runId: 0 }] },
    },
    {
      name: 'anchors without aliases are harmless',
      yaml: 'runtime: &rt nodejs20',
      want: { runtime: 'nodejs20' },
    },
    {
      name: 'comments and a leading document marker are fine',
      yaml: '# hi\n---\nruntime: nodejs20 # the runtime\n',
      want: { runtime: 'nodejs20' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = parse(c.yaml);
      assert.deepEqual(result.problems.map(formatProblem), []);
      for (const [key, value] of Object.entries(c.want)) {
        assert.deepEqual(result.manifest?.[key as keyof FunctionManifest], value, key);
      }
    });
  }
});

describe('parseManifest: every problem names file, line and key', () => {
  const cases: Array<{ name: string; yaml: string; want: Want; dirName?: string }> = [
    { name: 'runtime is required', yaml: 'name: a\n', want: [[1, 'runtime', /is required/]] },
    {
      name: 'unknown runtime',
      yaml: 'runtime: nodejs18\n',
      want: [[1, 'runtime', /one of python3\.11, .* go1\.23/]],
    },
    {
      name: 'an unknown key is an error, with the keys allowed there',
      yaml: 'runtime: nodejs20\nmemory: 512\n',
      want: [[2, 'memory', /unknown key "memory"; allowed here: name, runtime, .*memory_mb/]],
    },
    {
      name: 'unknown keys inside schedules and jobs',
      yaml: 'runtime: nodejs20\nschedules:\n  - name: a\n    cron: "@daily"\n    tz: UTC\njobs:\n  - name: j\n    run_id: 1\n    runId: 2\n',
      want: [
        [5, 'schedules[0].tz', /unknown key "tz"; allowed here: name, cron, timezone, event/],
        [9, 'jobs[0].runId', /unknown key "runId"/],
      ],
    },
    {
      name: 'memory below range',
      yaml: 'runtime: nodejs20\nmemory_mb: 32\n',
      want: [[2, 'memory_mb', /at least 64/]],
    },
    {
      name: 'memory above range',
      yaml: 'runtime: nodejs20\nmemory_mb: 16384\n',
      want: [[2, 'memory_mb', /at most 8192/]],
    },
    {
      name: 'memory not whole',
      yaml: 'runtime: nodejs20\nmemory_mb: 128.5\n',
      want: [[2, 'memory_mb', /whole number from 64 to 8192/]],
    },
    {
      name: 'timeout as a string',
      yaml: 'runtime: nodejs20\ntimeout_sec: "30"\n',
      want: [[2, 'timeout_sec', /whole number from 1 to 900/]],
    },
    {
      name: 'timeout zero',
      yaml: 'runtime: nodejs20\ntimeout_sec: 0\n',
      want: [[2, 'timeout_sec', /at least 1/]],
    },
    {
      name: 'timeout above range',
      yaml: 'runtime: nodejs20\ntimeout_sec: 901\n',
      want: [[2, 'timeout_sec', /at most 900/]],
    },
    {
      name: 'name that is not a DNS label',
      yaml: 'name: Hello_World\nruntime: nodejs20\n',
      want: [[1, 'name', /not a DNS-1123 label/]],
    },
    {
      name: 'name over 53 characters',
      yaml: `name: ${'a'.repeat(54)}\nruntime: nodejs20\n`,
      want: [[1, 'name', /longer than 53/]],
    },
    {
      name: 'a directory name that cannot be a function name asks for name:',
      yaml: 'runtime: nodejs20\n',
      dirName: 'My_Function',
      want: [[0, 'name', /directory name .* "My_Function" .* add a valid name: or rename the directory/]],
    },
    {
      name: 'a bad directory name is reported beside the other problems',
      yaml: 'runtime: nodejs20\nmemory_mb: 1\n',
      dirName: 'My_Function',
      want: [
        [0, 'name', /"My_Function" is not a DNS-1123 label/],
        [2, 'memory_mb', /at least 64/],
      ],
    },
    {
      name: 'env: empty value, list value, bad and reserved names',
      yaml: 'runtime: nodejs20\nenv:\n  EMPTY:\n  LIST: [a]\n  bad-name: x\n  PORT: "1"\n  SLESS_MODE: job\n',
      want: [
        [3, 'env.EMPTY', /must be a string; for an empty value write ""/],
        [4, 'env.LIST', /must be a string/],
        [5, 'env.bad-name', /not a valid environment variable name/],
        [6, 'env.PORT', /reserved/],
        [7, 'env.SLESS_MODE', /reserved/],
      ],
    },
    {
      name: 'env as a list',
      yaml: 'runtime: nodejs20\nenv: [A=1]\n',
      want: [[2, 'env', /expected a mapping, got a list/]],
    },
    {
      name: 'env_from_secrets: bad name and a repeat',
      yaml: 'runtime: nodejs20\nenv_from_secrets:\n  - db\n  - DB_Creds\n  - db\n',
      want: [
        [4, 'env_from_secrets[1]', /Secret name/],
        [5, 'env_from_secrets[2]', /listed twice/],
      ],
    },
    {
      name: 'include: absolute, escaping, the whole repository, backslashes',
      yaml: 'runtime: nodejs20\ninclude:\n  - /etc\n  - ../other-repo\n  - lib/../../x\n  - .\n  - lib\\common\n',
      want: [
        [3, 'include[0]', /absolute/],
        [4, 'include[1]', /leaves the repository/],
        [5, 'include[2]', /leaves the repository/],
        [6, 'include[3]', /whole repository/],
        [7, 'include[4]', /"\/" as separator/],
      ],
    },
    {
      name: 'ignore with an empty pattern',
      yaml: 'runtime: nodejs20\nignore: [""]\n',
      want: [[2, 'ignore[0]', /empty pattern/]],
    },
    {
      name: 'http.enabled as "yes"',
      yaml: 'runtime: nodejs20\nhttp:\n  enabled: "yes"\n',
      want: [[3, 'http.enabled', /true or false, got the string "yes"/]],
    },
    {
      name: 'http as a boolean',
      yaml: 'runtime: nodejs20\nhttp: false\n',
      want: [[2, 'http', /expected a mapping, got boolean false/]],
    },
    {
      name: 'python entrypoint without a function',
      yaml: 'runtime: python3.12\nentrypoint: handler\n',
      want: [[2, 'entrypoint', /"<module>\.<function>"/]],
    },
    {
      name: 'node entrypoint leaving the function folder',
      yaml: 'runtime: nodejs20\nentrypoint: ../shared/x.handle\n',
      want: [[2, 'entrypoint', /inside the function folder/]],
    },
    {
      name: 'schedules: bad cron, unknown zone, offset zone, duplicate name, missing fields',
      yaml: [
        'runtime: nodejs20',
        'schedules:',
        '  - name: a',
        '    cron: "0 3 * *"',
        '  - name: b',
        '    cron: "61 * * * *"',
        '  - name: c',
        '    cron: "@daily"',
        '    timezone: Mars/Olympus',
        '  - name: d',
        '    cron: "@daily"',
        '    timezone: "+03:00"',
        '  - name: a',
        '    cron: "0 0 L * *"',
        '  - name: Bad_Name',
        '  - cron: "@midnight"',
        '',
      ].join('\n'),
      want: [
        [4, 'schedules[0].cron', /4 field\(s\); write five/],
        [6, 'schedules[1].cron', /minute field "61"/],
        [9, 'schedules[2].timezone', /unknown time zone "Mars\/Olympus"/],
        [12, 'schedules[3].timezone', /not an IANA time zone name/],
        [13, 'schedules[4].name', /already used by schedules\[0\]/],
        [14, 'schedules[4].cron', /L, W and # are not supported/],
        [15, 'schedules[5].name', /not a DNS-1123 label/],
        [15, 'schedules[5].cron', /is required/],
        [16, 'schedules[6].name', /is required/],
        [16, 'schedules[6].cron', /unknown descriptor "@midnight"/],
      ],
    },
    {
      name: 'jobs: negative and fractional run_id, duplicate names',
      yaml: 'runtime: nodejs20\njobs:\n  - name: a\n    run_id: -1\n  - name: b\n    run_id: 1.5\n  - name: a\n    run_id: 1\n',
      want: [
        [4, 'jobs[0].run_id', /must be >= 0/],
        [6, 'jobs[1].run_id', /whole number >= 0/],
        [7, 'jobs[2].name', /already used by jobs\[0\]/],
      ],
    },
    {
      name: 'an event with .inf has no JSON form',
      yaml: 'runtime: nodejs20\njobs:\n  - name: a\n    run_id: 1\n    event: {n: .inf}\n',
      want: [[5, 'jobs[0].event.n', /no JSON form/]],
    },
    {
      name: 'all problems of a file are reported at once, in line order',
      yaml: 'memory_mb: 1\nruntime: nodejs99\ntimeout_sec: 0.5\nextra: 1\njobs: [{name: a, run_id: 0.5}, {name: a, run_id: 1}]\n',
      want: [
        [1, 'memory_mb', /at least 64/],
        [2, 'runtime', /one of/],
        [3, 'timeout_sec', /whole number/],
        [4, 'extra', /unknown key/],
        [5, 'jobs[0].run_id', /whole number/],
        [5, 'jobs[1].name', /already used by jobs\[0\]/],
      ],
    },
    {
      name: 'an entrypoint is checked against a valid runtime even when other fields fail',
      yaml: 'runtime: python3.11\nmemory_mb: 1.5\nentrypoint: handler\n',
      want: [
        [2, 'memory_mb', /whole number/],
        [3, 'entrypoint', /<module>/],
      ],
    },
  ];
  for (const c of cases) it(c.name, () => assertProblems(c.yaml, c.want, c.dirName));
});

describe('parseManifest: YAML that is refused before validation', () => {
  const cases: Array<{ name: string; yaml: string; want: Want }> = [
    { name: 'empty file', yaml: '', want: [[0, '', /empty; it needs at least "runtime:"/]] },
    { name: 'only comments', yaml: '# nothing here\n', want: [[0, '', /empty/]] },
    {
      name: 'a list at the root',
      yaml: '- runtime: nodejs20\n',
      want: [[1, '', /is a list; it must be a mapping/]],
    },
    {
      name: 'a scalar at the root',
      yaml: 'nodejs20\n',
      want: [[1, '', /single value; it must be a mapping/]],
    },
    {
      name: 'duplicate keys',
      yaml: 'runtime: nodejs20\nmemory_mb: 128\nmemory_mb: 256\n',
      want: [[3, '', /duplicate key memory_mb/]],
    },
    {
      name: 'two documents',
      yaml: 'runtime: nodejs20\n---\nruntime: go1.23\n',
      want: [[2, '', /more than one YAML document/]],
    },
    {
      name: 'broken syntax',
      yaml: 'runtime: nodejs20\nenv:\n\tA: 1\n',
      want: [[3, '', /YAML syntax: Tabs/]],
    },
    {
      name: 'unclosed flow mapping',
      yaml: 'runtime: nodejs20\nhttp: {enabled: true\n',
      want: [[3, '', /YAML syntax/]],
    },
    {
      name: 'an alias',
      yaml: 'runtime: nodejs20\nenv: &e {A: "1"}\nx: *e\n',
      want: [[3, '', /aliases \(\*e\) are not allowed/]],
    },
    {
      name: 'a custom tag',
      yaml: 'runtime: !runtime nodejs20\n',
      want: [[1, '', /Unresolved tag: !runtime; .*without custom tags/]],
    },
    {
      name: 'a mapping as a key',
      yaml: 'runtime: nodejs20\n? {a: 1}\n: x\n',
      want: [[2, '', /key must be a plain name/]],
    },
  ];
  for (const c of cases) it(c.name, () => assertProblems(c.yaml, c.want));

  it('an alias bomb is refused without expanding it', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 30; i++) {
      lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    }
    const started = performance.now();
    const result = parse(`runtime: nodejs20\n${lines.join('\n')}\n`);
    assert.ok(performance.now() - started < 1000, 'answers at once');
    assert.equal(result.manifest, undefined);
    assert.equal(result.problems.length, 1, 'one problem, not one per alias');
    assert.match(
      result.problems[0]?.message ?? '',
      /aliases \(\*a0\) are not allowed in function\.yaml \(290 aliases in the file\)/,
    );
  });

  it('a file over 64 KiB is refused before parsing', () => {
    const text = `runtime: nodejs20\n# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`;
    assertProblems(text, [[0, '', /over the 65536-byte limit/]]);
  });

  it('a file of exactly 64 KiB is still read', () => {
    const head = 'runtime: nodejs20\n# ';
    const text = `${head}${'x'.repeat(MAX_MANIFEST_BYTES - head.length - 1)}\n`;
    assert.equal(Buffer.byteLength(text), MAX_MANIFEST_BYTES);
    assert.deepEqual(parse(text).problems, []);
  });

  it('an event nested 15,000 deep is one problem of this file, with its line (issue 31 item 9)', () => {
    const deep = `${'['.repeat(15_000)}${']'.repeat(15_000)}`;
    const result = parse(`runtime: nodejs20\njobs:\n  - name: seed\n    run_id: 1\n    event: ${deep}\n`);
    assert.equal(result.manifest, undefined);
    assert.equal(result.problems.length, 1, JSON.stringify(result.problems.map(formatProblem)));
    assert.equal(result.problems[0]?.line, 5);
    assert.match(result.problems[0]?.message ?? '', /more than 256 "\[" or "\{" open at once; a value may nest at most 64 levels/);
  });

  it('an event nested past 64 levels is refused with its key; 64 levels are fine', () => {
    const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    assertProblems(`runtime: nodejs20\nschedules:\n  - name: tick\n    cron: "* * * * *"\n    event: ${nest(65)}\n`, [
      [5, 'schedules[0].event', /nested deeper than 64 levels/],
    ]);
    assert.deepEqual(parse(`runtime: nodejs20\njobs:\n  - name: seed\n    run_id: 1\n    event: ${nest(64)}\n`).problems, []);
    const block = Array.from({ length: 70 }, (_, i) => `${' '.repeat(6 + 2 * i)}k${i}:`).join('\n');
    assertProblems(`runtime: nodejs20\njobs:\n  - name: seed\n    run_id: 1\n    event:\n${block} 1\n`, [
      [5, 'jobs[0].event', /nested deeper than 64 levels/],
    ]);
  });

  it('more schedules or jobs than a function may declare are refused at their key (issue 31 item 5)', () => {
    const schedules = Array.from({ length: 21 }, (_, i) => `  - {name: s${i}, cron: "* * * * *"}`).join('\n');
    const jobs = Array.from({ length: 21 }, (_, i) => `  - {name: j${i}, run_id: 1}`).join('\n');
    assertProblems(`runtime: nodejs20\nschedules:\n${schedules}\njobs:\n${jobs}\n`, [
      [2, 'schedules', /21 schedules; a function may declare at most 20 \(each is a CronJob; setting SLESS_MAX_SCHEDULES_PER_FUNCTION\)/],
      [24, 'jobs', /21 jobs; a function may declare at most 20 \(each run is a Job; setting SLESS_MAX_JOBS_PER_FUNCTION\)/],
    ]);
    const twenty = Array.from({ length: 20 }, (_, i) => `  - {name: s${i}, cron: "* * * * *"}`).join('\n');
    assert.deepEqual(parse(`runtime: nodejs20\nschedules:\n${twenty}\n`).problems, []);
  });

  it('the caps on schedules and jobs are the ones given (SLESS_MAX_SCHEDULES_PER_FUNCTION, SLESS_MAX_JOBS_PER_FUNCTION)', () => {
    const text = 'runtime: nodejs20\nschedules:\n  - {name: a, cron: "* * * * *"}\n  - {name: b, cron: "* * * * *"}\n  - {name: c, cron: "* * * * *"}\njobs:\n  - {name: j, run_id: 1}\n  - {name: k, run_id: 1}\n';
    const capped = parseManifest(text, { file: FILE, dirName: 'hello', schedulesPerFunction: 2, jobsPerFunction: 1 });
    assert.equal(capped.manifest, undefined);
    assert.deepEqual(capped.problems.map(formatProblem), [
      `${FILE}:2: schedules: 3 schedules; a function may declare at most 2 (each is a CronJob; setting SLESS_MAX_SCHEDULES_PER_FUNCTION)`,
      `${FILE}:6: jobs: 2 jobs; a function may declare at most 1 (each run is a Job; setting SLESS_MAX_JOBS_PER_FUNCTION)`,
    ]);
    const roomy = parseManifest(text, { file: FILE, dirName: 'hello', schedulesPerFunction: 3, jobsPerFunction: 2 });
    assert.deepEqual(roomy.problems, []);
    assert.equal(roomy.manifest?.schedules.length, 3);
    const fifty = Array.from({ length: 50 }, (_, i) => `  - {name: s${i}, cron: "* * * * *"}`).join('\n');
    assert.deepEqual(parseManifest(`runtime: nodejs20\nschedules:\n${fifty}\n`, { file: FILE, dirName: 'hello', schedulesPerFunction: 50 }).problems, []);
  });

  it('an env value with a NUL byte is refused (issue 31 item 14)', () => {
    assertProblems('runtime: nodejs20\nenv:\n  A: "x\\0y"\n', [[3, 'env.A', /NUL byte/]]);
  });

  it('a schedule that never fires is refused with its line (issue 31 item 10)', () => {
    assertProblems('runtime: nodejs20\nschedules:\n  - name: never\n    cron: "0 0 31 4,6,9,11 *"\n', [
      [4, 'schedules[0].cron', /never fires/],
    ]);
  });

  it('"__proto__" is an unknown key like any other, and pollutes nothing', () => {
    assertProblems('runtime: nodejs20\n__proto__:\n  polluted: true\n', [[2, '__proto__', /unknown key/]]);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('parseManifest: the name of a broken function', () => {
  const cases: Array<{ name: string; yaml: string; want: string }> = [
    { name: 'a readable name: survives other problems', yaml: 'name: api\nruntime: nodejs99\n', want: 'api' },
    { name: 'no name: the directory', yaml: 'runtime: nodejs99\n', want: 'hello' },
    { name: 'an invalid name: the directory', yaml: 'name: Not_Valid\nruntime: nodejs20\n', want: 'hello' },
    { name: 'unparseable YAML: the directory', yaml: 'name: api\nname: api2\n', want: 'hello' },
    { name: 'a syntax error elsewhere: the readable name', yaml: 'name: api\nruntime: [oops\n', want: 'api' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(parse(c.yaml).name, c.want));
});
