// `sless validate [DIR]` and `sless hash [DIR]` on a folder of good and bad manifests, run as the
// real command (bin/sless.js) so exit codes and stdout/stderr are what a user's script sees.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { writeFiles } from '../helpers/git-server.ts';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/sless.js');

async function sless(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

let dir = '';
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sless-cli-'));
  await writeFiles(dir, {
    '.git/HEAD': 'ref: refs/heads/main\n', // marks the repository root include paths start from
    'lib/common/u.js': 'u',
    'good/hello/function.yaml': 'runtime: nodejs20\ninclude: [lib/common]\n',
    'good/hello/handler.js': 'exports.handle = () => "hi";\n',
    'good/py/function.yaml': 'runtime: python3.12\nentrypoint: main.handle\n',
    'good/py/main.py': 'def handle(event):\n    return event\n',
    'bad/hello/function.yaml': 'runtime: nodejs20\n',
    'bad/unknown-key/function.yaml': 'runtime: nodejs20\ncolour: blue\n',
    'bad/two/function.yaml': 'runtime: cobol\nmemory_mb: 1\n',
    'bad/missing-include/function.yaml': 'runtime: nodejs20\ninclude:\n  - lib/none\n',
    'bad/not-yaml/function.yaml': 'runtime: [nodejs20\n',
    'bad/dupe-a/function.yaml': 'name: twin\nruntime: nodejs20\n',
    'bad/dupe-b/function.yaml': 'name: twin\nruntime: nodejs20\n',
    'scaled/wide/function.yaml': 'runtime: nodejs20\nscale:\n  min: 0\n  max: 8\n  idle: 30s\n',
    'scaled/wide/handler.js': 'exports.handle = () => "hi";\n',
    'ticking/clock/function.yaml': `runtime: nodejs20\nschedules:\n${['a', 'b', 'c'].map((n) => `  - {name: ${n}, cron: "@hourly"}`).join('\n')}\njobs:\n  - {name: seed, run_id: 1}\n`,
    'ticking/clock/handler.js': 'exports.handle = () => "hi";\n',
    // issue 31 item 9: one event nested 15,000 deep beside a healthy sibling
    'deep/healthy/function.yaml': 'runtime: nodejs20\n',
    'deep/hostile/function.yaml': `runtime: nodejs20\njobs:\n  - name: seed\n    run_id: 1\n    event: ${'['.repeat(15_000)}${']'.repeat(15_000)}\n`,
  });
});
after(() => rm(dir, { recursive: true, force: true }));

describe('sless validate', () => {
  it('exits 0 and says so when every function.yaml is valid', async () => {
    const r = await sless(['validate', 'good'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /2 functions valid/);
  });

  it('exits 1 with one file:line: key: message line per problem', async () => {
    const r = await sless(['validate', 'bad'], dir);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    const summary = lines.pop();
    assert.match(summary ?? '', /problems in 6 of 7 functions/);
    const expect = [
      /^bad\/dupe-a\/function\.yaml:1: name: .*twin/,
      /^bad\/dupe-b\/function\.yaml:1: name: .*twin/,
      /^bad\/missing-include\/function\.yaml:3: include\[0\]: "lib\/none" does not exist/,
      /^bad\/not-yaml\/function\.yaml:\d+: /,
      /^bad\/two\/function\.yaml:1: runtime: /,
      /^bad\/two\/function\.yaml:2: memory_mb: /,
      /^bad\/unknown-key\/function\.yaml:2: colour: /,
    ];
    for (const re of expect) assert.ok(lines.some((l) => re.test(l)), `no line matches ${re} in\n${r.stderr}`);
    assert.ok(!lines.some((l) => l.startsWith('bad/hello/')), 'a valid function gets no message');
    const perFile = new Map<string, number>();
    for (const l of lines) perFile.set(l.split(':')[0] ?? '', (perFile.get(l.split(':')[0] ?? '') ?? 0) + 1);
    assert.equal(perFile.get('bad/unknown-key/function.yaml'), 1, 'one message per problem, not per file');
  });

  it('validates the current folder by default and paths stay relative to it', async () => {
    const r = await sless(['validate'], path.join(dir, 'bad'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^two\/function\.yaml:1: runtime: /m);
  });

  it('checks scale.max against SLESS_MAX_REPLICAS, the cap the controller and sless dev apply', async () => {
    assert.equal((await sless(['validate', 'scaled'], dir)).code, 0);
    const capped = await sless(['validate', 'scaled'], dir, { SLESS_MAX_REPLICAS: '4' });
    assert.equal(capped.code, 1);
    assert.match(capped.stderr, /^scaled\/wide\/function\.yaml:4: scale\.max: 8 is over this namespace's cap of 4 replicas \(SLESS_MAX_REPLICAS\)$/m);
    const bad = await sless(['validate', 'scaled'], dir, { SLESS_MAX_REPLICAS: 'many' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /SLESS_MAX_REPLICAS/);
  });

  it('checks how many schedules and jobs a function declares against SLESS_MAX_SCHEDULES_PER_FUNCTION and SLESS_MAX_JOBS_PER_FUNCTION', async () => {
    const byDefault = await sless(['validate', 'ticking'], dir);
    assert.equal(byDefault.code, 0, byDefault.stderr);
    const capped = await sless(['validate', 'ticking'], dir, { SLESS_MAX_SCHEDULES_PER_FUNCTION: '2' });
    assert.equal(capped.code, 1);
    assert.deepEqual(capped.stderr.trim().split('\n'), [
      'ticking/clock/function.yaml:2: schedules: 3 schedules; a function may declare at most 2 (each is a CronJob; setting SLESS_MAX_SCHEDULES_PER_FUNCTION)',
      '1 problem in 1 of 1 function',
    ]);
    assert.equal((await sless(['validate', 'ticking'], dir, { SLESS_MAX_SCHEDULES_PER_FUNCTION: '3' })).code, 0);
    const noJobs = await sless(['validate', 'ticking'], dir, { SLESS_MAX_JOBS_PER_FUNCTION: '0' });
    assert.equal(noJobs.code, 2);
    assert.match(noJobs.stderr, /SLESS_MAX_JOBS_PER_FUNCTION/);
  });

  it('a value nested 15,000 deep is a file:line problem of its own file; the sibling stays valid', async () => {
    const r = await sless(['validate', 'deep'], dir);
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(r.stderr.trim().split('\n'), [
      'deep/hostile/function.yaml:5: more than 256 "[" or "{" open at once; a value may nest at most 64 levels of arrays and objects',
      '1 problem in 1 of 2 functions',
    ]);
  });

  it('exits 2 for a folder that does not exist or a bad option', async () => {
    assert.equal((await sless(['validate', 'nope'], dir)).code, 2);
    assert.equal((await sless(['validate', '--frobnicate'], dir)).code, 2);
  });
});

describe('sless hash', () => {
  it('prints one JSON line per function with name, repo-relative path and code_hash', async () => {
    const r = await sless(['hash', 'good'], dir);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; path: string; code_hash: string });
    assert.deepEqual(
      rows.map((x) => [x.name, x.path]),
      [
        ['hello', 'good/hello'],
        ['py', 'good/py'],
      ],
    );
    for (const row of rows) assert.match(row.code_hash, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(Object.keys(rows[0] ?? {}), ['name', 'path', 'code_hash']);
  });

  it('counts include paths, and gives broken functions a null code_hash and exit 1', async () => {
    const r = await sless(['hash', '.'], dir);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { path: string; code_hash: string | null });
    const good = rows.find((x) => x.path === 'good/hello');
    const bad = rows.find((x) => x.path === 'bad/hello');
    assert.ok(good?.code_hash && bad?.code_hash);
    assert.notEqual(good.code_hash, bad.code_hash, 'good/hello includes lib/common, bad/hello does not');
    assert.equal(r.code, 1, 'broken functions make hash exit 1');
    assert.equal(rows.find((x) => x.path === 'bad/two')?.code_hash, null);
  });
});
