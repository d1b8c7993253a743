import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { invokePath, parseHeader, readData } from './invoke.ts';

test("-H 'k: v' splits at the first colon; a line without a name is refused", () => {
  assert.deepEqual(parseHeader('X-Trace: a:b'), ['X-Trace', 'a:b']);
  assert.throws(() => parseHeader('no colon'), /-H "no colon" is not a header; write it as -H 'name: value'/);
  assert.throws(() => parseHeader(': v'), /is not a header/);
});

test('--path is appended to /fn/{ns}/{name} with its query string', () => {
  assert.equal(invokePath('dev', 'hello', undefined), '/fn/dev/hello');
  assert.equal(invokePath('dev', 'hello', 'items/1?x=2'), '/fn/dev/hello/items/1?x=2');
  assert.equal(invokePath('dev', 'hello', '/'), '/fn/dev/hello');
});

test('-d @FILE sends the file; a missing file is a one-line error', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-invoke-'));
  try {
    await writeFile(path.join(dir, 'e.json'), '{"a":1}');
    assert.equal((await readData(`@${path.join(dir, 'e.json')}`))?.toString(), '{"a":1}');
    assert.equal((await readData('plain'))?.toString(), 'plain');
    await assert.rejects(readData(`@${dir}/missing`), /cannot read -d @.*missing: ENOENT/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
