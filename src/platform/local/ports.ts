// What the local platform is given rather than knowing: how each runtime runs on this machine
// (where the functions come from is a RepositoryReader, src/source/repository-read.ts).
import type { Runtime } from '../../manifest/types.ts';
import type { CommandSpec } from './child-group.ts';

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
