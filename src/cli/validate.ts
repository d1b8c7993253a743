// `sless validate [DIR]`: checks every function.yaml under DIR (default: the current folder) with the
// same code the controller uses: exit 0 when all are valid, else 1 and one
// `file:line: key: message` line per problem on stderr (2 for a usage error).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadValidateSettings } from '../config/config.ts';
import type { ManifestCaps } from '../manifest/defaults.ts';
import { formatProblem } from '../manifest/format-problem.ts';
import { buildSnapshot } from '../source/build-snapshot.ts';
import { WorkTree } from '../source/work-tree.ts';
import type { Snapshot } from '../source/types.ts';
import type { CommandIo } from './io.ts';

/**
 * The root `include` paths are relative to: the enclosing git working tree (the folder holding
 * `.git`) when DIR is inside one, else DIR itself.
 */
export function repositoryRoot(dir: string): string {
  const start = path.resolve(dir);
  for (let d = start; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return start;
  }
}

/**
 * Parses `[DIR]` and builds the snapshot of the functions under DIR, read from the working tree of
 * its repository (see repositoryRoot); a number is the exit code of a usage error.
 */
export async function folderSnapshot(
  command: string,
  argv: string[],
  io: CommandIo,
  limits: ManifestCaps = {},
): Promise<{ root: string; snapshot: Snapshot } | number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(`usage: sless ${command} [DIR]   (DIR defaults to the current folder)\n`);
    return 0;
  }
  const unknown = argv.find((a) => a.startsWith('-'));
  if (unknown || argv.length > 1) {
    io.stderr.write(`sless ${command}: ${unknown ? `unknown option ${unknown}` : 'give at most one DIR'}; usage: sless ${command} [DIR]\n`);
    return 2;
  }
  const dir = argv[0] ?? '.';
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    io.stderr.write(`sless ${command}: ${dir} is not a folder; usage: sless ${command} [DIR]\n`);
    return 2;
  }
  const root = repositoryRoot(dir);
  try {
    const watched = path.relative(root, path.resolve(dir)).split(path.sep).join('/');
    return { root, snapshot: await buildSnapshot(new WorkTree(root), { path: watched, ...limits }) };
  } catch (err) {
    io.stderr.write(`sless ${command}: cannot read ${dir}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

/** A repository path as the user would type it from the current folder. */
export function displayPath(root: string, repoPath: string): string {
  return path.relative(process.cwd(), path.resolve(root, repoPath)) || '.';
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  let caps: ManifestCaps;
  try {
    caps = loadValidateSettings();
  } catch (err) {
    io.stderr.write(`sless validate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const read = await folderSnapshot('validate', argv, io, caps);
  if (typeof read === 'number') return read;
  const { root, snapshot } = read;
  let problems = 0;
  for (const f of snapshot.functions) {
    for (const p of f.problems) {
      io.stderr.write(`${formatProblem({ ...p, file: displayPath(root, p.file) })}\n`);
      problems++;
    }
  }
  const total = snapshot.functions.length;
  if (total === 0) {
    io.stderr.write(`sless validate: no function.yaml found under ${argv[0] ?? '.'}\n`);
    return 0;
  }
  if (problems > 0) {
    const broken = snapshot.functions.filter((f) => f.problems.length > 0).length;
    io.stderr.write(`${problems} problem${problems === 1 ? '' : 's'} in ${broken} of ${total} function${total === 1 ? '' : 's'}\n`);
    return 1;
  }
  io.stdout.write(`${total} function${total === 1 ? '' : 's'} valid\n`);
  return 0;
}
