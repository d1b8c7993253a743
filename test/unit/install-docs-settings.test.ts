// docs/install.md's table of settings names every setting `sless controller` reads, and nothing else:
// a new setting fails this test until the installation docs say what it is and its default.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { describeSettings } from '../../src/config/config.ts';

const NAME = /\b(SLESS_[A-Z0-9_]+|AWS_[A-Z_]+|DATABASE_URL|POD_NAME|POD_NAMESPACE)\b/g;

it('docs/install.md lists every controller setting in its Settings table', async () => {
  const docs = await readFile(new URL('../../docs/install.md', import.meta.url), 'utf8');
  const table = docs.slice(docs.indexOf('\n## Settings\n'));
  assert.ok(table.length > 100, 'docs/install.md has a "## Settings" section');
  // The first cell of each row names the settings it describes.
  const documented = new Set(
    table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(NAME)].map((m) => m[1]!)),
  );
  // `  --port / SLESS_PORT   HTTP port ...`: the variable of each line of `sless controller --help`.
  const read = new Set(
    describeSettings('controller')
      .split('\n')
      .map((line) => /^\s+(?:--[a-z-]+ \/ )?([A-Z][A-Z0-9_]+)\s/.exec(line)?.[1])
      .filter((n): n is string => n !== undefined),
  );
  assert.ok(read.size > 40, `read ${read.size} settings from sless controller --help`);
  assert.deepEqual([...documented].sort(), [...read].sort());
});
