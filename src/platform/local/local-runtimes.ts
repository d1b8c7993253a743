// How each runtime runs on this machine for `sless dev`: an adapter from src/build/runtime-catalog.ts
// (which says how every runtime installs, builds and serves a function, for the image and for this
// machine alike) to the command specs the local platform spawns.
//
// A prepared folder builds/<key>/ holds app/ (the function's code, SLESS_FUNCTION_DIR) and work/
// beside it (Python packages, the Go binary), so installed files never mix with the function's own.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  defaultRuntimesDir,
  functionFilesOf,
  languageOf,
  localRuntimePlan,
  type Command,
  type FunctionFiles,
  type Language,
} from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';
import { childBaseEnv, type CommandSpec } from './child-group.ts';
import type { LocalRuntimes, ServeOptions } from './ports.ts';

/** The files (relative to runtimes/) whose change means a prepared folder must be rebuilt (the local "base image"). */
const SERVER_FILES: Record<Language, readonly string[]> = {
  python: ['python/server.py'],
  node: ['node/server.mjs'],
  go: ['go/runtime/runtime.go', 'go/runtime/go.mod'],
};

/** Bump when the layout of a prepared folder changes, so folders of the old layout are rebuilt. */
const FOLDER_LAYOUT = 'app+work';

/** The folder beside app/ for what the runtime installs or builds (see the layout above). */
function workDirOf(appDir: string): string {
  return path.join(path.dirname(appDir), 'work');
}

function specOf(command: Command, env: Readonly<Record<string, string>>): CommandSpec {
  const [program, ...args] = command.argv;
  if (program === undefined)
    throw new Error(`empty command for ${command.cwd}: src/build/runtime-catalog.ts must name a program`);
  return { command: program, args, cwd: command.cwd, env };
}

/** What `<program> --version` (`go version`) prints (Python 3.11 and older print it on stderr), or undefined. */
function versionOutput(program: string, args: readonly string[] = ['--version']): string | undefined {
  const run = spawnSync(program, args, { encoding: 'utf8', timeout: 5000 });
  return run.status === 0 ? `${run.stdout}${run.stderr}`.trim() : undefined;
}

export function localRuntimes(
  opts: { runtimesDir?: string; python?: string; node?: string } = {},
): LocalRuntimes {
  const runtimesDir = opts.runtimesDir ?? defaultRuntimesDir;
  const planOf = (runtime: Runtime, appDir: string, entrypoint: string, files: FunctionFiles) =>
    localRuntimePlan(runtime, {
      functionDir: appDir,
      workDir: workDirOf(appDir),
      entrypoint,
      files,
      runtimesDir,
      python: opts.python,
      node: opts.node,
    });
  const versions = new Map<Runtime, string>();
  const interpreters = new Map<string, string | undefined>();
  return {
    versionOf(runtime) {
      let v = versions.get(runtime);
      if (!v) {
        const h = createHash('sha256').update(`${runtime}\n${FOLDER_LAYOUT}\n`);
        for (const f of SERVER_FILES[languageOf(runtime)]) {
          try {
            h.update(readFileSync(path.join(runtimesDir, f)));
          } catch {
            h.update(`missing ${f}`);
          }
        }
        v = h.digest('hex').slice(0, 16);
        versions.set(runtime, v);
      }
      return v;
    },
    installSteps(runtime, appDir, files) {
      const env = childBaseEnv(process.env);
      // The entrypoint does not change what is installed; the plan's run command is not used here.
      return planOf(runtime, appDir, '', functionFilesOf(files)).prepare.map((c) => specOf(c, env));
    },
    interpreterOf(runtime) {
      const language = languageOf(runtime);
      if (language === 'go') {
        // runtimes/go/build.sh compiles with the `go` on the PATH.
        if (!interpreters.has('go')) interpreters.set('go', versionOutput('go', ['version']));
        return { program: 'go', version: interpreters.get('go') };
      }
      const program = language === 'python' ? (opts.python ?? 'python3') : (opts.node ?? process.execPath);
      if (!interpreters.has(program)) interpreters.set(program, program === process.execPath ? process.version : versionOutput(program));
      return { program: language === 'node' && program === process.execPath ? 'the node running sless' : program, version: interpreters.get(program) };
    },
    command(runtime, appDir, serve: ServeOptions) {
      // Only the server is needed, and it does not depend on which dependency files exist.
      const { run } = planOf(runtime, appDir, serve.entrypoint, functionFilesOf([]));
      return specOf(run, { ...serve.env, ...run.env });
    },
  };
}
