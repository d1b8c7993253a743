import type { ManifestProblem } from './types.ts';

/**
 * `file:line: key: message`, the shape editors and CI annotators link to. A problem with no line
 * (0: the whole file, or a name taken from the directory) drops `line:`; one with no key drops `key:`.
 */
export function formatProblem(p: ManifestProblem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}` : p.file;
  return p.key === '' ? `${where}: ${p.message}` : `${where}: ${p.key}: ${p.message}`;
}
