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

  it('--preview-schedules and --preview-secrets: off and none by default, as spec.previews', () => {
    const off = loadDevConfig([], {});
    assert.deepEqual([off.previewSchedules, off.previewSecrets], [false, 'none']);
    const on = loadDevConfig(['--preview-schedules', '--preview-secrets', 'inherit'], {});
    assert.deepEqual([on.previewSchedules, on.previewSecrets], [true, 'inherit']);
    assert.deepEqual(loadDevConfig([], { SLESS_PREVIEW_SCHEDULES: '1', SLESS_PREVIEW_SECRETS: 'inherit' }).previewSecrets, 'inherit');
    assert.throws(() => loadDevConfig(['--preview-secrets', 'all'], {}), /preview-secrets/);
  });

  it('a ttl that is no duration and a negative maxOpen name the flag', () => {
    assert.throws(() => loadDevConfig(['--preview-ttl', 'soon'], {}), /preview-ttl.*a duration like 72h/);
    assert.throws(() => loadDevConfig(['--preview-max-open', '-1'], {}), /preview-max-open/);
  });
});
