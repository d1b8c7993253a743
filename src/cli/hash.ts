// `sless hash [DIR]`: one JSON line per function under DIR, `{"name","path","code_hash"}`, in path
// order; `path` is relative to the repository root (the folder holding .git, else DIR), as in a
// FunctionRepository's status. A function whose
// code_hash cannot be computed (broken manifest, escaping symlink...) gets `"code_hash": null`,
// its problems go to stderr and the exit code is 1.
import { formatProblem } from '../manifest/format-problem.ts';
import type { CommandIo } from './io.ts';
import { displayPath, folderSnapshot } from './validate.ts';

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const read = await folderSnapshot('hash', argv, io);
  if (typeof read === 'number') return read;
  const { root, snapshot } = read;
  let code = 0;
  for (const f of snapshot.functions) {
    io.stdout.write(`${JSON.stringify({ name: f.name, path: f.path || '.', code_hash: f.codeHash ?? null })}\n`);
    for (const p of f.problems) {
      io.stderr.write(`${formatProblem({ ...p, file: displayPath(root, p.file) })}\n`);
      code = 1;
    }
  }
  return code;
}
