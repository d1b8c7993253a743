import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENTRYPOINT, manifestSchema } from '../manifest/manifest-schema.ts';
import { CRD_DEFAULTS } from './kubernetes/objects/crd-defaults.ts';
import { FUNCTION_INPUT_DEFAULTS, functionSettingsOf } from './records.ts';

describe('functionSettingsOf', () => {
  it('fills what a /v1 input leaves out', () => {
    assert.deepEqual(functionSettingsOf({ name: 'hello', runtime: 'nodejs20' }), {
      name: 'hello',
      runtime: 'nodejs20',
      entrypoint: 'handler.handle',
      memoryMb: 128,
      timeoutSec: 30,
      env: {},
      envFromSecrets: [],
      httpEnabled: true,
    });
  });

  it('keeps what the input says', () => {
    const input = {
      name: 'hello',
      runtime: 'python3.12',
      entrypoint: 'main.run',
      memoryMb: 256,
      timeoutSec: 5,
      env: { A: '1' },
      envFromSecrets: ['creds'],
      httpEnabled: false,
    } as const;
    assert.deepEqual(functionSettingsOf(input), input);
  });

  it('uses the defaults a function.yaml and a Function object get', () => {
    const manifest = manifestSchema.parse({ runtime: 'nodejs20' });
    assert.equal(FUNCTION_INPUT_DEFAULTS.entrypoint, DEFAULT_ENTRYPOINT);
    assert.equal(FUNCTION_INPUT_DEFAULTS.memoryMb, manifest.memory_mb);
    assert.equal(FUNCTION_INPUT_DEFAULTS.timeoutSec, manifest.timeout_sec);
    assert.equal(FUNCTION_INPUT_DEFAULTS.entrypoint, CRD_DEFAULTS.entrypoint);
    assert.equal(FUNCTION_INPUT_DEFAULTS.memoryMb, CRD_DEFAULTS.memoryMB);
    assert.equal(FUNCTION_INPUT_DEFAULTS.timeoutSec, CRD_DEFAULTS.timeoutSec);
  });
});
