// Two folders declaring the same function name would fight over one Deployment. Neither wins: both
// become errors (no manifest, so nothing of theirs is built, changed or removed), and every other
// function is unaffected.
import type { FunctionEntry } from './types.ts';
import { nameLineOf } from '../manifest/name-lines.ts';
import { manifestFile } from '../manifest/manifest-file.ts';

export function findDuplicateNames(entries: readonly FunctionEntry[]): FunctionEntry[] {
  const pathsByName = new Map<string, string[]>();
  for (const entry of entries) {
    if (entry.manifest === undefined) continue;
    pathsByName.set(entry.name, [...(pathsByName.get(entry.name) ?? []), entry.path]);
  }
  return entries.map((entry) => {
    const paths = pathsByName.get(entry.name);
    if (entry.manifest === undefined || paths === undefined || paths.length < 2) return entry;
    const others = paths.filter((p) => p !== entry.path).map((p) => manifestFile(p));
    const message = `function name "${entry.name}" is also used by ${others.join(', ')}; names must be unique in a repository, so none of them is deployed until one is renamed`;
    const { manifest, ...rest } = entry;
    void manifest;
    return {
      ...rest,
      problems: [
        ...entry.problems,
        { file: manifestFile(entry.path), line: nameLineOf(entry.manifest), key: 'name', message },
      ],
    };
  });
}
