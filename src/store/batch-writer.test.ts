import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchWriter } from './batch-writer.ts';

describe('BatchWriter', () => {
  it('writes queued records in batches of at most batchSize', async () => {
    const batches: number[][] = [];
    const w = new BatchWriter<number>({ write: async (b) => void batches.push(b), onDrop: () => assert.fail('nothing should drop'), batchSize: 3, flushIntervalMs: 10_000 });
    for (let i = 0; i < 7; i++) w.record(i);
    await w.close();
    assert.deepEqual(batches, [[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('drops and counts records when the queue is full, without blocking the caller', async () => {
    const drops: Array<[number, string]> = [];
    let release: () => void = () => undefined;
    const w = new BatchWriter<number>({
      write: () => new Promise<void>((resolve) => (release = resolve)),
      onDrop: (n, reason) => drops.push([n, reason]),
      maxQueue: 2,
      batchSize: 100,
      flushIntervalMs: 10_000,
    });
    for (let i = 0; i < 5; i++) w.record(i);
    assert.deepEqual(drops, [
      [1, 'queue_full'],
      [1, 'queue_full'],
      [1, 'queue_full'],
    ]);
    const closing = w.close();
    release();
    await closing;
  });

  it('drops and counts a batch that cannot be written, then keeps going', async () => {
    const drops: Array<[number, string]> = [];
    let fail = true;
    const written: number[] = [];
    const w = new BatchWriter<number>({
      write: async (b) => {
        if (fail) throw new Error('database down');
        written.push(...b);
      },
      onDrop: (n, reason) => drops.push([n, reason]),
      flushIntervalMs: 10_000,
    });
    w.record(1);
    w.record(2);
    await w.flush();
    assert.deepEqual(drops, [[2, 'write_failed']]);
    fail = false;
    w.record(3);
    await w.close();
    assert.deepEqual(written, [3]);
  });
});
