import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UploadGate } from './upload-gate.ts';

describe('UploadGate', () => {
  it('lets one upload per namespace and two per process through, and says which cap is full', () => {
    const gate = new UploadGate({ perProcess: 2, perNamespace: 1, retryAfterSec: 7 });
    const a = gate.acquire('a');
    assert.ok(a.ok);
    const a2 = gate.acquire('a');
    assert.ok(!a2.ok && /namespace a/.test(a2.reason) && a2.retryAfterSec === 7);
    const b = gate.acquire('b');
    assert.ok(b.ok);
    const c = gate.acquire('c');
    assert.ok(!c.ok && /this server has 2 upload\(s\) being unpacked/.test(c.reason));
    a.release();
    a.release(); // twice is once
    assert.equal(gate.running, 1);
    assert.ok(gate.acquire('c').ok);
  });
});
