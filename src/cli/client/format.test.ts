import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { COLUMNS, formatOutput, formatTable, parseOutputFormat, shortRevision } from './format.ts';

const functions = [
  {
    name: 'hello',
    runtime: 'nodejs20',
    phase: 'Ready',
    managed_by: 'git:dev/local',
    url: 'http://x/fn/dev/hello',
  },
  { name: 'a-much-longer-name', runtime: 'python3.11', phase: 'Failed', managed_by: 'api' },
];

test('a table pads each column to its widest cell and shows a missing value as "-"', () => {
  assert.equal(
    formatTable(functions, COLUMNS.functions),
    [
      'NAME                RUNTIME     PHASE   MANAGED-BY     URL',
      'hello               nodejs20    Ready   git:dev/local  http://x/fn/dev/hello',
      'a-much-longer-name  python3.11  Failed  api            -',
      '',
    ].join('\n'),
  );
});

test('json and yaml carry /v1 objects unchanged; one object is a one-row table', () => {
  assert.deepEqual(JSON.parse(formatOutput(functions, 'json', COLUMNS.functions)), functions);
  assert.deepEqual(parse(formatOutput(functions, 'yaml', COLUMNS.functions)), functions);
  assert.equal(formatOutput(functions[0], 'table', COLUMNS.functions).split('\n').length, 3);
});

test('-o accepts table, json and yaml only', () => {
  assert.equal(parseOutputFormat(undefined), 'table');
  assert.equal(parseOutputFormat('yaml'), 'yaml');
  assert.throws(
    () => parseOutputFormat('xml'),
    /-o xml is not an output format; use one of table, json, yaml/,
  );
});

test('hashes and git SHAs are cut to 12 hex digits, other values stay', () => {
  assert.equal(shortRevision(`sha256:${'ab'.repeat(32)}`), `sha256:${'ab'.repeat(6)}`);
  assert.equal(shortRevision('0123456789abcdef0123456789abcdef01234567'), '0123456789ab');
  assert.equal(shortRevision('main'), 'main');
  assert.equal(shortRevision(undefined), undefined);
});
