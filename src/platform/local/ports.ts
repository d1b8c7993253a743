// The two things the local platform is given rather than knowing: where the repository's functions
// come from (git URL, local git repository or plain folder) and how each runtime runs on this machine.
import type { Runtime } from '../../manifest/types.ts';
import type { FunctionEntry, Snapshot } from '../../source/types.ts';
import type { CodeFile } from '../types.ts';
import type { CommandSpec } from './child-group.ts';

export interface RepositoryRead {
  readonly snapshot: Snapshot;
  /** The code of one function of this snapshot (own files relative, included files "/"-prefixed). */
  files(entry: FunctionEntry): AsyncIterable<CodeFile>;
}

export interface RepositoryReader {
  /** For status and logs; never contains credentials. */
  readonly displayUrl: string;
  readonly branch: string;
  readonly path: string;
  read(): Promise<RepositoryRead>;
  /** Releases connections (a fetched repository's HTTP agent). */
  close?(): Promise<void>;
}

export interface ServeOptions {
  readonly port: number;
  readonly entrypoint: string;
  /** SLESS_* variables and the function's own env, already merged. */
  readonly env: Readonly<Record<string, string>>;
}

export interface LocalRuntimes {
  /** Changes whenever a prepared folder of this runtime must be rebuilt (the local "base image"). */
  versionOf(runtime: Runtime): string;
  /** Dependency installs for a function folder, given the files it has. */
  installSteps(runtime: Runtime, appDir: string, files: readonly string[]): readonly CommandSpec[];
  /** The command that serves (or, with SLESS_MODE=job, runs once) the function in `appDir`. */
  command(runtime: Runtime, appDir: string, opts: ServeOptions): CommandSpec;
  /** The interpreter (Go: the compiler) that runs the runtime here and what its `--version` (`go version`) said. */
  interpreterOf?(runtime: Runtime): { readonly program: string; readonly version: string | undefined } | undefined;
}
