// What `sless dev` prints while it prepares a function, one line per step a user waits for, and
// the note when a function asks for a runtime version this machine does not run (Python, Node or Go). Pure.
import { languageOf, type Language } from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';

/** Printed when a real build starts (not for a reused prepared folder). */
export function buildingLine(name: string, runtime: Runtime): string {
  return languageOf(runtime) === 'go' ? `${name}: compiling, the first build takes ~40 s` : `${name}: building (dependencies, if any, are installed first)`;
}

export function readyLine(name: string, url: string): string {
  return `${name}: ready at ${url}`;
}

const LANGUAGE_NAMES: Readonly<Record<Language, string>> = { python: 'Python', node: 'Node', go: 'Go' };

/** The version a runtime asks for: "3.12" of python3.12, "22" of nodejs22, "1.23" of go1.23. */
export function wantedVersion(runtime: Runtime): { readonly language: Language; readonly version: string } | undefined {
  const version = /(\d+(?:\.\d+)?)$/.exec(runtime)?.[1];
  return version === undefined ? undefined : { language: languageOf(runtime), version };
}

/**
 * The warning for a function whose runtime asks for another version than the toolchain found
 * (`found`: what `python3 --version` / `node --version` / `go version` says, e.g. "Python 3.11.7",
 * "v22.23.3", "go version go1.26.8 linux/amd64"), or undefined when they agree or the version is unknown.
 */
export function versionMismatch(name: string, runtime: Runtime, found: string | undefined, program: string): string | undefined {
  const wanted = wantedVersion(runtime);
  if (!wanted) return undefined;
  const version = /(\d+(?:\.\d+)*)/.exec(found ?? '')?.[1];
  if (!version) return `${name}: asks for ${runtime}; could not tell which version ${program} is`;
  const same = version === wanted.version || version.startsWith(`${wanted.version}.`);
  const uses = wanted.language === 'go' ? 'compiles with the Go it finds' : 'uses the interpreter it finds';
  return same ? undefined : `${name}: asks for ${runtime} but runs on ${LANGUAGE_NAMES[wanted.language]} ${version} (${program}): sless dev ${uses}, the cluster uses the runtime's image`;
}
