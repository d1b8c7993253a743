import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadDevConfig } from './config.ts';

describe('sless dev --previews flags', () => {
  it('off by default; on with the defaults of spec.previews', () => {
    const off = loadDevConfig([], {});
    assert.deepEqual([off.previews, off.previewTtl, off.previewMaxOpen], [false, '72h', 5]);
    const on = loadDevConfig(['--previews', '--preview-ttl', '30s', '--preview-max-open', '1'], {});
    assert.deepEqual([on.previews, on.previewTtl, on.previewMaxOpen], [true, '30s', 1]);
  });

  it('a ttl that is no duration and a negative maxOpen name the flag', () => {
    assert.throws(() => loadDevConfig(['--preview-ttl', 'soon'], {}), /preview-ttl.*a duration like 72h/);
    assert.throws(() => loadDevConfig(['--preview-max-open', '-1'], {}), /preview-max-open/);
  });
});
