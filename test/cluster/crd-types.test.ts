// The TypeScript shapes of the sless kinds are generated from crds/*.yaml; this keeps them in step.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { CRD_TYPES_PATH, generateCrdTypes } from './gen-crd-types.ts';

test('src/platform/kubernetes/crd-types.ts is what crds/*.yaml generate (else run test/cluster/gen-crd-types.ts)', async () => {
  assert.equal(await readFile(CRD_TYPES_PATH, 'utf8'), await generateCrdTypes());
});
