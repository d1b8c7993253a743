import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogLine } from '../types.ts';
import { FunctionLogs } from './function-logs.ts';

const never = new AbortController().signal;

async function take(lines: AsyncIterable<LogLine>, n: number): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for await (const l of lines) {
    out.push(l);
    if (out.length === n) break;
  }
  return out;
}

describe('FunctionLogs (sless dev: what function processes print)', () => {
  it('keeps whole lines per replica and stream; a part without its newline waits for the rest', () => {
    const logs = new FunctionLogs();
    logs.write('dev', 'f', 'pid-1', 'stdout', 'one\ntw');
    logs.write('dev', 'f', 'pid-2', 'stderr', 'other\n');
    logs.write('dev', 'f', 'pid-1', 'stdout', 'o\r\n');
    assert.deepEqual(logs.lines('dev', 'f', {}).map((l) => [l.replica, l.stream, l.line]), [
      ['pid-1', 'stdout', 'one'],
      ['pid-2', 'stderr', 'other'],
      ['pid-1', 'stdout', 'two'],
    ]);
  });

  it('keeps an unfinished line when its process ends', () => {
    const logs = new FunctionLogs();
    logs.write('dev', 'f', 'pid-1', 'stderr', 'Traceback without newline');
    logs.flush('dev', 'f', 'pid-1');
    assert.deepEqual(logs.lines('dev', 'f', {}).map((l) => l.line), ['Traceback without newline']);
  });

  it('is bounded: the oldest lines go past the line or byte cap, and a long line is cut', () => {
    const logs = new FunctionLogs({ lines: 3, bytes: 1 << 20, lineChars: 10 });
    logs.write('dev', 'f', 'pid-1', 'stdout', 'a\nb\nc\nd\n0123456789abcdef\n');
    assert.deepEqual(logs.lines('dev', 'f', {}).map((l) => l.line), ['c', 'd', '0123456789 [cut: 16 characters]']);
    const small = new FunctionLogs({ lines: 100, bytes: 300, lineChars: 1000 });
    for (let i = 0; i < 50; i++) small.write('dev', 'f', 'pid-1', 'stdout', `line ${i}\n`);
    const kept = small.lines('dev', 'f', {});
    assert.ok(kept.length < 10, `${kept.length} lines kept under a 300-byte cap`);
    assert.equal(kept.at(-1)?.line, 'line 49');
  });

  it('answers tail and since', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const logs = new FunctionLogs(undefined, () => new Date(now));
    logs.write('dev', 'f', 'pid-1', 'stdout', 'old\n');
    now += 60_000;
    logs.write('dev', 'f', 'pid-1', 'stdout', 'new1\nnew2\n');
    assert.deepEqual(logs.lines('dev', 'f', { tail: 1 }).map((l) => l.line), ['new2']);
    assert.deepEqual(logs.lines('dev', 'f', { sinceMs: now - 1000 }).map((l) => l.line), ['new1', 'new2']);
    assert.deepEqual(logs.lines('dev', 'f', { tail: 0 }), []);
  });

  it('follows: the backlog, then new lines, until the reader leaves', async () => {
    const logs = new FunctionLogs();
    logs.write('dev', 'f', 'pid-1', 'stdout', 'before\n');
    const abort = new AbortController();
    const reading = take(logs.read('dev', 'f', { follow: true, signal: abort.signal }), 3);
    logs.write('dev', 'f', 'pid-2', 'stdout', 'after\n');
    logs.write('dev', 'g', 'pid-3', 'stdout', 'another function\n');
    logs.write('dev', 'f', 'pid-1', 'stderr', 'last\n');
    assert.deepEqual((await reading).map((l) => `${l.replica} ${l.line}`), ['pid-1 before', 'pid-2 after', 'pid-1 last']);
    abort.abort();
    assert.equal(logs.followers('dev', 'f'), 0);
  });

  it('never holds a process up: a follower that falls behind loses lines and is told how many', async () => {
    const logs = new FunctionLogs();
    const abort = new AbortController();
    const lines = logs.read('dev', 'f', { follow: true, signal: abort.signal }, 1000);
    for (let i = 0; i < 100; i++) logs.write('dev', 'f', 'pid-1', 'stdout', `line ${i}\n`);
    const got = await take(lines, 2);
    assert.equal(got[0]?.replica, 'sless');
    assert.match(got[0]?.line ?? '', /^\d+ line\(s\) dropped/);
    assert.equal(got[1]?.line, 'line 0');
    abort.abort();
  });

  it('without follow, reads what is kept and ends', async () => {
    const logs = new FunctionLogs();
    logs.write('dev', 'f', 'pid-1', 'stdout', 'x\n');
    const all: LogLine[] = [];
    for await (const l of logs.read('dev', 'f', { follow: false, signal: never })) all.push(l);
    assert.deepEqual(all.map((l) => l.line), ['x']);
  });
});
