// Every file in test/fixtures/manifests is a specification: `valid-*` (and the contract's example)
// parse without a problem; `invalid-*` list their expected problems as `# expect: <line> <key>`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { formatProblem } from './format-problem.ts';
import { parseManifest } from './parse-manifest.ts';

const dir = new URL('../../test/fixtures/manifests/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

describe('manifest fixtures', () => {
  it('the fixture folder is not empty', () => assert.ok(files.length >= 8));
  for (const file of files) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    const parsed = parseManifest(text, { file, dirName: 'fixture' });
    if (file.startsWith('invalid-')) {
      it(`${file}: the expected problems, each on its line and key`, () => {
        const want = [...text.matchAll(/^# expect: (\d+) ?(.*)$/gm)].map((m) => `${m[1]} ${m[2] ?? ''}`);
        assert.ok(want.length > 0, 'an invalid fixture lists its expected problems');
        const got = parsed.problems.map((p) => `${p.line} ${p.key}`);
        assert.deepEqual(got, want, parsed.problems.map(formatProblem).join('\n'));
        assert.equal(parsed.manifest, undefined);
      });
    } else {
      it(`${file}: parses without a problem`, () => {
        assert.deepEqual(parsed.problems.map(formatProblem), []);
        assert.ok(parsed.manifest);
      });
    }
  }
});
