import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { PREVIEW_DEFAULTS } from '../preview/preview-settings.ts';
import { FUNCTION_DEFAULTS, REPOSITORY_DEFAULTS, TRIGGER_DEFAULTS } from './defaults.ts';
import { DEFAULT_ENTRYPOINT, manifestSchema } from './manifest-schema.ts';

type Props = Record<string, { default?: unknown; properties?: Props }>;

async function specProperties(file: string): Promise<Props> {
  const crd = parse(await readFile(new URL(`../../crds/${file}`, import.meta.url), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: Props } } } } }> };
  };
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties ?? {};
}

describe('defaults: one source', () => {
  it('function.yaml gets them', () => {
    const m = manifestSchema.parse({ runtime: 'nodejs20' });
    assert.deepEqual([DEFAULT_ENTRYPOINT, m.memory_mb, m.timeout_sec, m.http.enabled], [
      FUNCTION_DEFAULTS.entrypoint,
      FUNCTION_DEFAULTS.memoryMb,
      FUNCTION_DEFAULTS.timeoutSec,
      FUNCTION_DEFAULTS.httpEnabled,
    ]);
  });

  it('the CRDs state the same values', async () => {
    const fn = await specProperties('function.yaml');
    assert.deepEqual([fn.entrypoint?.default, fn.memoryMB?.default, fn.timeoutSec?.default], [
      FUNCTION_DEFAULTS.entrypoint,
      FUNCTION_DEFAULTS.memoryMb,
      FUNCTION_DEFAULTS.timeoutSec,
    ]);
    assert.equal((await specProperties('trigger.yaml')).enabled?.default, TRIGGER_DEFAULTS.enabled);
    const repo = await specProperties('functionrepository.yaml');
    for (const key of ['branch', 'interval', 'suspend', 'prune'] as const) {
      if (repo[key]?.default !== undefined) assert.equal(repo[key]?.default, REPOSITORY_DEFAULTS[key], key);
    }
    const previews = repo.previews?.properties ?? {};
    for (const key of Object.keys(PREVIEW_DEFAULTS) as (keyof typeof PREVIEW_DEFAULTS)[]) {
      assert.equal(previews[key]?.default, PREVIEW_DEFAULTS[key], `spec.previews.${key}`);
    }
  });
});
