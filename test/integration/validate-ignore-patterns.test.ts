// `sless validate` over functions whose ignore patterns made the matching library backtrack for
// hours (issue 31 item 2: `**/` 16 times against a path 30 folders deep): the real command, in a
// child process with a deadline, answers in seconds; a pattern past the bounds is a
// `file:line: ignore[i]: ...` problem.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const sless = fileURLToPath(new URL('../../bin/sless.js', import.meta.url));
// Far above what it takes on a loaded machine (tsx compiles the CLI at start: 4-11 s at load average 15-20), far below the hours it took.
const DEADLINE_MS = 60_000;
const HOSTILE = `${'**/'.repeat(16)}x`;

describe('sless validate with hostile ignore patterns', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sless-ignore-'));
    const deep = Array.from({ length: 30 }, (_, i) => `d${i}`).join('/');
    for (const fn of ['globs', 'file']) {
      await mkdir(path.join(dir, fn, deep), { recursive: true });
      await writeFile(path.join(dir, fn, deep, 'handler.js'), 'exports.handle = () => 1;\n');
      await writeFile(path.join(dir, fn, 'index.js'), 'exports.handle = () => 1;\n');
    }
    await writeFile(path.join(dir, 'globs/function.yaml'), `runtime: nodejs20\nignore:\n  - "${HOSTILE}"\n  - "*a*a*a*a*a*a*a*a*b"\n`);
    await writeFile(path.join(dir, 'file/function.yaml'), 'runtime: nodejs20\n');
    await writeFile(path.join(dir, 'file/.slessignore'), `# hostile\n${HOSTILE}\n`);
    await mkdir(path.join(dir, 'long'));
    await writeFile(path.join(dir, 'long/function.yaml'), `runtime: nodejs20\nignore:\n  - "*.log"\n  - "${'y'.repeat(2000)}"\n`);
    await writeFile(path.join(dir, 'long/index.js'), 'exports.handle = () => 1;\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('answers within seconds, and refuses only the pattern past the length bound, with file:line', async () => {
    const started = Date.now();
    const result = await new Promise<{ code: number | null; stderr: string; killed: boolean }>((resolve) => {
      const child = execFile(process.execPath, [sless, 'validate', dir], { timeout: DEADLINE_MS, killSignal: 'SIGKILL' }, (err, _stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr, killed: child.killed }),
      );
    });
    const ms = Date.now() - started;
    console.log(`sless validate took ${ms} ms; stderr:\n${result.stderr}`);
    assert.equal(result.killed, false, `sless validate was still running after ${DEADLINE_MS} ms`);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /long\/function\.yaml:4: ignore\[1\]: the pattern is 2000 characters long; at most 1024 are accepted/);
    assert.match(result.stderr, /1 problem in 1 of 3 functions/);
  });
});
