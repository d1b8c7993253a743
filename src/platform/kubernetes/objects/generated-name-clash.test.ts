import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest } from '../../../manifest/parse-manifest.ts';
import { generatedNameClash } from './generated-name-clash.ts';
import { LABELS } from './meta.ts';

const manifest = (yaml: string, dir: string) => {
  const m = parseManifest(yaml, { file: `${dir}/function.yaml`, dirName: dir }).manifest;
  assert.ok(m);
  return m;
};

describe('generatedNameClash: names another repository or /v1 already holds (issue 31 item 8)', () => {
  const ab = manifest('runtime: nodejs20\njobs: [{name: c, run_id: 1}]\n', 'a-b');
  it('names the object, its function and its owner', () => {
    const taken = { metadata: { labels: { [LABELS.repository]: 'one' } }, spec: { functionRef: 'a' } };
    const why = generatedNameClash(ab, 'team', 'two', (kind, name) => (kind === 'FunctionJob' && name === 'a-b-c' ? taken : undefined));
    assert.equal(why, 'job "c" of function "a-b" becomes FunctionJob "a-b-c", which already exists in team for function a, managed by repository one; rename one of them');
  });
  it('says "made through the API" for an object without a repository', () => {
    const why = generatedNameClash(ab, 'team', 'two', (kind) => (kind === 'Trigger' ? { spec: { functionRef: 'a-b' } } : undefined));
    assert.match(why ?? '', /the http trigger of function "a-b" becomes Trigger "a-b-http", which already exists in team for function a-b, made through the API/);
  });
  it('takes its own repository’s objects as its own (a rename between revisions)', () => {
    const own = { metadata: { labels: { [LABELS.repository]: 'two' } }, spec: { functionRef: 'a' } };
    assert.equal(generatedNameClash(ab, 'team', 'two', () => own), undefined);
  });
});
