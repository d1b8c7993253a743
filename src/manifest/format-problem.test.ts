import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatProblem } from './format-problem.ts';

describe('formatProblem', () => {
  const cases = [
    {
      p: { file: 'f/function.yaml', line: 4, key: 'memory_mb', message: 'must be at least 64' },
      want: 'f/function.yaml:4: memory_mb: must be at least 64',
    },
    {
      p: { file: 'f/function.yaml', line: 2, column: 7, key: '', message: 'YAML syntax: x' },
      want: 'f/function.yaml:2: YAML syntax: x',
    },
    {
      p: { file: 'f/function.yaml', line: 0, key: 'name', message: 'bad' },
      want: 'f/function.yaml: name: bad',
    },
    {
      p: { file: 'f/function.yaml', line: 0, key: '', message: 'too big' },
      want: 'f/function.yaml: too big',
    },
  ];
  for (const c of cases) it(`renders ${c.want}`, () => assert.equal(formatProblem(c.p), c.want));
});
