import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isText, sourceText, sourceView } from './source-view.ts';
import { functionRow, invocationView, logTail, manifestFileOf, nextRunOf, plainTextListing, problemLines, shortHash, timeView } from './view-models.ts';
import { functionSettingsOf } from '../platform/records.ts';
import type { FunctionRecord, RepositoryRecord } from '../platform/types.ts';

const fn = (over: Partial<FunctionRecord>): FunctionRecord => ({
  ...functionSettingsOf({ name: 'hello', runtime: 'nodejs20' }),
  namespace: 'dev',
  phase: 'Ready',
  managedBy: 'api',
  ...over,
});

describe('view models', () => {
  it('say how many replicas serve, and "idle (scaled to zero)" for a function at zero', () => {
    assert.equal(functionRow(fn({ replicas: { desired: 0, ready: 0 } })).replicas, 'idle (scaled to zero)');
    assert.equal(functionRow(fn({ replicas: { desired: 1, ready: 1 } })).replicas, '1 replica');
    assert.equal(functionRow(fn({ replicas: { desired: 3, ready: 2 } })).replicas, '2 of 3 replicas ready');
    // Disabled is not idle: it says nothing about replicas (its phase and message say disabled).
    assert.equal(functionRow(fn({ httpEnabled: false, replicas: { desired: 0, ready: 0 } })).replicas, undefined);
    assert.equal(functionRow(fn({})).replicas, undefined);
  });
  it('mark calls that waited for a cold start', () => {
    const call = { namespace: 'dev', function: 'hello', method: 'GET', path: '/', status: 200, durationMs: 412.4, requestBytes: 0, responseBytes: 2, startedAt: '2026-12-01T08:00:00.000Z' };
    assert.equal(invocationView({ ...call, coldStartMs: 380.6 }).coldStartMs, 381);
    assert.equal(invocationView(call).coldStartMs, undefined);
  });
  it('list one tab-separated line per function for scripts, "-" for a missing URL', () => {
    assert.equal(plainTextListing([fn({ url: 'http://x/fn/dev/hello' }), fn({ name: 'b', phase: 'Building' })]), 'hello\tnodejs20\tReady\thttp://x/fn/dev/hello\nb\tnodejs20\tBuilding\t-\n');
  });
  it('split a folder error into its file:line problems', () => {
    assert.deepEqual(problemLines('f/function.yaml:2: memory_mb: must be at least 64; f/function.yaml:5: env: a; b are not names'), [
      'f/function.yaml:2: memory_mb: must be at least 64',
      'f/function.yaml:5: env: a; b are not names',
    ]);
    assert.deepEqual(problemLines(undefined), []);
  });
  it('compute a schedule’s next run in its time zone', () => {
    const now = Date.parse('2026-12-01T08:10:30Z');
    assert.equal(nextRunOf('0 3 * * *', 'Europe/Moscow', now), '2026-12-02T00:00:00.000Z');
    assert.equal(nextRunOf('*/5 * * * *', undefined, now), '2026-12-01T08:15:00.000Z');
    assert.equal(nextRunOf('not cron', undefined, now), undefined);
  });
  it('keep the last lines of a failed build’s log', () => {
    const log = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const tail = logTail(log, 3)?.split('\n');
    assert.deepEqual(tail, ['…', 'line 97', 'line 98', 'line 99']);
  });
  it('shorten hashes and show times in UTC', () => {
    assert.equal(shortHash(`sha256:${'ab'.repeat(32)}`), 'sha256:abababababab');
    assert.deepEqual(timeView('2026-12-01T08:10:30.123Z'), { iso: '2026-12-01T08:10:30.123Z', text: '2026-12-01 08:10:30 UTC' });
    assert.equal(timeView('garbage'), undefined);
  });
  it('point a git-managed function at its function.yaml', () => {
    const repo = { name: 'team', url: 'https://git.example/team.git', functions: [{ name: 'hello', path: 'functions/hello' }] } as unknown as RepositoryRecord;
    assert.deepEqual(manifestFileOf(fn({ managedBy: 'git:team' }), [repo]), { repository: 'team', url: 'https://git.example/team.git', file: 'functions/hello/function.yaml' });
    assert.equal(manifestFileOf(fn({}), [repo]), undefined);
  });
});

describe('source view', () => {
  const files = [
    { path: 'b.bin', mode: '100644' as const, content: Buffer.from([0, 159, 146, 150]) },
    { path: 'a.js', mode: '100755' as const, content: Buffer.from('x\n') },
    { path: 'link', mode: '120000' as const, content: Buffer.from('a.js') },
  ];
  it('shows text files, names binary ones and symlinks, sorted by path', () => {
    assert.deepEqual(
      sourceView(files).map((f) => [f.path, f.text ?? f.note ?? `-> ${f.symlinkTarget}`, f.executable]),
      [
        ['a.js', 'x\n', true],
        ['b.bin', 'not shown: binary file', false],
        ['link', '-> a.js', false],
      ],
    );
    assert.equal(isText(Buffer.from('héllo')), true);
    assert.equal(isText(Buffer.from([0xff, 0xfe])), false);
  });
  it('prints every file after a ==> path <== line for curl', () => {
    assert.equal(sourceText(files), '==> a.js <==\nx\n\n==> b.bin <==\n(not shown: binary file)\n\n==> link <==\n-> a.js\n');
  });
});
