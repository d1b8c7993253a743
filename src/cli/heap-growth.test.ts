// The controller's V8 heap growing factor (heap-growth.ts): the setting, and that V8 then sizes the old
// generation at 1.2x what survived each full GC, in a process with the pod's heap flags.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadControllerConfig } from '../config/config.ts';
import { heapGrowthFlags } from './heap-growth.ts';

const base = { SLESS_JWT_SECRET: 'a-test-secret-of-at-least-32-bytes!', SLESS_S3_BUCKET: 'contexts', SLESS_REGISTRY: 'reg.example/sless' };

describe('heap growth', () => {
  it('SLESS_HEAP_GROWING_PERCENT: 20 (1.2x) by default, 0 for V8 its own factor', () => {
    assert.equal(loadControllerConfig([], base).heapGrowingPercent, 20);
    assert.equal(loadControllerConfig([], { ...base, SLESS_HEAP_GROWING_PERCENT: '20' }).heapGrowingPercent, 20);
    assert.equal(loadControllerConfig([], { ...base, SLESS_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent, 0);
    assert.throws(() => loadControllerConfig([], { ...base, SLESS_HEAP_GROWING_PERCENT: '-1' }));
    assert.deepEqual(heapGrowthFlags(20), ['--heap-growing-percent=20']);
    assert.deepEqual(heapGrowthFlags(0), []);
  });

  it('applied at run time, every full GC sets the next limit at 1.2x what it kept', async () => {
    const module = fileURLToPath(new URL('./heap-growth.ts', import.meta.url));
    const script = `import { applyHeapGrowth } from ${JSON.stringify(module)}; applyHeapGrowth(20);
      const keep = []; for (let i = 0; i < 3e6; i++) keep.push({ i }); console.log(keep.length);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--max-old-space-size=768', '--max-semi-space-size=4', '--trace-gc-verbose', '--input-type=module', '-e', script],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const factors = [...stdout.matchAll(/\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB \(([\d.]+)\)/g)].map((m) => m[1]);
    assert.ok(factors.length > 0, 'a full GC ran');
    assert.deepEqual([...new Set(factors)], ['1.2'], `factors after each full GC: ${factors.join(', ')}`);
  });
});
