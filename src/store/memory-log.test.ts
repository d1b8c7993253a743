import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryLog } from './memory-log.ts';

describe('MemoryLog', () => {
  it('keeps the newest entries per function, newest first', async () => {
    const log = new MemoryLog<{ namespace: string; function: string; n: number }>({ perFunction: 3 });
    for (let n = 1; n <= 7; n++) log.record({ namespace: 'dev', function: 'a', n });
    log.record({ namespace: 'dev', function: 'b', n: 100 });
    assert.deepEqual((await log.list('dev', 'a', 10)).map((e) => e.n), [7, 6, 5]);
    assert.deepEqual((await log.list('dev', 'a', 2)).map((e) => e.n), [7, 6]);
    assert.deepEqual((await log.list('dev', 'b', 10)).map((e) => e.n), [100]);
    assert.deepEqual(await log.list('dev', 'none', 10), []);
  });
});
