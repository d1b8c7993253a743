// What `sless dev` prints while it prepares a function, one line per step a user waits for, and
// the note when a function asks for a runtime version this machine does not run. Pure.
import { languageOf } from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';

/** Printed when a real build starts (not for a reused prepared folder). */
export function buildingLine(name: string, runtime: Runtime): string {
  return languageOf(runtime) === 'go' ? `${name}: compiling, the first build takes ~40 s` : `${name}: building (dependencies, if any, are installed first)`;
}

export function readyLine(name: string, url: string): string {
  return `${name}: ready at ${url}`;
}

/** The version a runtime asks for: "3.12" of python3.12, "22" of nodejs22 (Go compiles with what is installed). */
export function wantedVersion(runtime: Runtime): { readonly language: 'python' | 'node'; readonly version: string } | undefined {
  const m = /^(python|nodejs)(\d+(?:\.\d+)?)$/.exec(runtime);
  if (!m) return undefined;
  return { language: m[1] === 'python' ? 'python' : 'node', version: m[2] as string };
}

/**
 * The warning for a function whose runtime asks for another version than the interpreter found
 * (`found`: what `python3 --version` / `node --version` says, e.g. "Python 3.11.7", "v22.23.3"), or
 * undefined when they agree or the version is unknown.
 */
export function versionMismatch(name: string, runtime: Runtime, found: string | undefined, program: string): string | undefined {
  const wanted = wantedVersion(runtime);
  if (!wanted) return undefined;
  const version = /(\d+(?:\.\d+)*)/.exec(found ?? '')?.[1];
  if (!version) return `${name}: asks for ${runtime}; could not tell which version ${program} is`;
  const same = version === wanted.version || version.startsWith(`${wanted.version}.`);
  return same ? undefined : `${name}: asks for ${runtime} but runs on ${wanted.language === 'python' ? 'Python' : 'Node'} ${version} (${program}): sless dev uses the interpreter it finds, the cluster uses the runtime's image`;
}
