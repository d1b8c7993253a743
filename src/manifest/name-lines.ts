// The line of an explicit `name:` per parsed manifest, so that a duplicate-name problem found later
// (across folders, after parsing) can still point at a line. Kept beside the manifest object rather
// than in FunctionManifest, because the manifest is compared and serialised as configuration and a
// line number is not configuration. A manifest that was copied loses its line: problems then say 0.
import type { FunctionManifest } from './types.ts';

const nameLines = new WeakMap<FunctionManifest, number>();

export function rememberNameLine(manifest: FunctionManifest, line: number): void {
  nameLines.set(manifest, line);
}

/** 1-based line of `name:`, or 0 when the name came from the directory (or is unknown). */
export function nameLineOf(manifest: FunctionManifest): number {
  return nameLines.get(manifest) ?? 0;
}
