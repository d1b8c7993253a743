// What sless knows about each runtime: its language, its base image, where its server lives in
// runtimes/, and the commands that install a function's dependencies, build it (Go) and serve it.
// One table and a few pure functions, shared by the image build (dockerfile.ts, with in-image paths)
// and by `sless dev` (with paths on this machine), so both install and run a function the same way.
import path from 'node:path';
import type { Runtime } from '../manifest/types.ts';
import { packageRoot } from '../package-root.ts';

export const LANGUAGES = ['python', 'node', 'go'] as const;
export type Language = (typeof LANGUAGES)[number];

export interface RuntimeEntry {
  readonly language: Language;
  /** The upstream image runtimes/<runtime>/Dockerfile starts FROM. */
  readonly upstreamImage: string;
  /**
   * Tag of sless-runtime-<runtime>. Bump it whenever the runtime's server or Dockerfile changes:
   * a new base image makes every function of that runtime rebuild (docs/contract.md §1, code_hash).
   */
  readonly imageTag: string;
  /** The server, relative to runtimes/ (Go: the runtime module the build compiles in). */
  readonly server: string;
}

export const RUNTIME_CATALOG = {
  'python3.11': {
    language: 'python',
    upstreamImage: 'python:3.11-slim',
    imageTag: '3',
    server: 'python/server.py',
  },
  'python3.12': {
    language: 'python',
    upstreamImage: 'python:3.12-slim',
    imageTag: '3',
    server: 'python/server.py',
  },
  nodejs20: { language: 'node', upstreamImage: 'node:20-slim', imageTag: '3', server: 'node/server.mjs' },
  nodejs22: { language: 'node', upstreamImage: 'node:22-slim', imageTag: '3', server: 'node/server.mjs' },
  'go1.23': { language: 'go', upstreamImage: 'golang:1.23-bookworm', imageTag: '3', server: 'go/runtime' },
} as const satisfies Record<Runtime, RuntimeEntry>;

/** Paths inside the images, as runtimes/<runtime>/Dockerfile lays them out. */
export const IMAGE_PATHS = {
  functionDir: '/app/function',
  pythonDeps: '/app/python-deps',
  runtimesDir: '/opt/sless',
  goBinary: '/app/server',
} as const;

/** The user every function image runs as. */
export const RUNTIME_UID = 10001;

/** Which dependency files a function folder has (at its root); they decide the install steps. */
export interface FunctionFiles {
  readonly hasRequirementsTxt: boolean;
  readonly hasPackageJson: boolean;
  /** package-lock.json or npm-shrinkwrap.json. */
  readonly hasPackageLock: boolean;
  /** Which of the two lockfiles it is (npm-shrinkwrap.json wins, as with npm); default package-lock.json. */
  readonly packageLockFile?: 'package-lock.json' | 'npm-shrinkwrap.json';
  readonly hasGoMod: boolean;
  readonly hasGoSum?: boolean;
}

/** The dependency files among a function's file paths (relative to its folder); only its root counts. */
export function functionFilesOf(paths: Iterable<string>): FunctionFiles {
  const root = new Set(paths);
  const shrinkwrap = root.has('npm-shrinkwrap.json');
  return {
    hasRequirementsTxt: root.has('requirements.txt'),
    hasPackageJson: root.has('package.json'),
    hasPackageLock: shrinkwrap || root.has('package-lock.json'),
    ...(shrinkwrap ? { packageLockFile: 'npm-shrinkwrap.json' as const } : root.has('package-lock.json') ? { packageLockFile: 'package-lock.json' as const } : {}),
    hasGoMod: root.has('go.mod'),
    hasGoSum: root.has('go.sum'),
  };
}

/**
 * The files (at the function's root) that decide its dependencies: the image copies only these before
 * it installs, so the install layer is rebuilt (or taken from the layer cache) only when they change.
 */
export function dependencyFilesOf(runtime: Runtime, files: FunctionFiles): string[] {
  switch (languageOf(runtime)) {
    case 'python':
      return files.hasRequirementsTxt ? ['requirements.txt'] : [];
    case 'node':
      if (!files.hasPackageJson) return [];
      return files.hasPackageLock ? ['package.json', files.packageLockFile ?? 'package-lock.json'] : ['package.json'];
    case 'go':
      if (!files.hasGoMod) return [];
      return files.hasGoSum ? ['go.mod', 'go.sum'] : ['go.mod'];
  }
}

/**
 * The image of a build's fetch and push steps (runtimes/build-tools: a Go binary, FROM scratch). Bump the
 * tag whenever runtimes/build-tools changes.
 */
export const BUILD_TOOLS_IMAGE = { name: 'sless-build-tools', tag: '4' } as const;

export function buildToolsImageOf(prefix: string): string {
  return underPrefix(prefix, `${BUILD_TOOLS_IMAGE.name}:${BUILD_TOOLS_IMAGE.tag}`);
}

/** `<prefix>/<name>`; an empty prefix gives the bare name (a local image). */
function underPrefix(prefix: string, name: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' ? name : `${trimmed}/${name}`;
}

/** `<prefix>/sless-runtime-<runtime>:<tag>`; an empty prefix gives a bare name (a local image). */
export function baseImageOf(runtime: Runtime, prefix: string): string {
  return underPrefix(prefix, `sless-runtime-${runtime}:${RUNTIME_CATALOG[runtime].imageTag}`);
}

export function languageOf(runtime: Runtime): Language {
  return RUNTIME_CATALOG[runtime].language;
}

/** One program run: argv plus the folder it runs in. */
export interface Command {
  readonly argv: readonly string[];
  readonly cwd: string;
}

export interface InstallPaths {
  /** The function's code (its root holds requirements.txt / package.json / go.mod). */
  readonly functionDir: string;
  /** Python only: where pip puts the packages (PYTHONPATH must name it when the server runs). */
  readonly pythonDeps: string;
  /** The interpreter that runs pip: `python` in the image, `python3` on most machines. */
  readonly python: string;
}

/**
 * The dependency installs for a function (empty when it has nothing to install). Node: `npm ci` when
 * a lockfile pins the tree, else `npm install`; never the devDependencies. Go needs none: its
 * modules are fetched by the build (see buildCommand).
 */
export function installCommands(runtime: Runtime, files: FunctionFiles, paths: InstallPaths): Command[] {
  const cwd = paths.functionDir;
  switch (languageOf(runtime)) {
    case 'python':
      if (!files.hasRequirementsTxt) return [];
      return [
        {
          argv: [
            paths.python,
            '-m',
            'pip',
            'install',
            '--no-cache-dir',
            '--disable-pip-version-check',
            '--no-input',
            '--target',
            paths.pythonDeps,
            '-r',
            'requirements.txt',
          ],
          cwd,
        },
      ];
    case 'node':
      if (!files.hasPackageJson) return [];
      return [
        {
          argv: files.hasPackageLock
            ? ['npm', 'ci', '--omit=dev', '--no-audit', '--no-fund']
            : ['npm', 'install', '--omit=dev', '--no-audit', '--no-fund', '--no-package-lock'],
          cwd,
        },
      ];
    case 'go':
      return [];
  }
}

/**
 * Go only, in the image: fetch the modules go.mod names into the module cache, in a layer of their own
 * (`sless dev` skips it: the build fetches them, and the function folder on your machine stays untouched).
 */
export function goModDownloadCommand(functionDir: string): Command {
  return { argv: ['go', 'mod', 'download'], cwd: functionDir };
}

/** Go only: compiles the function with the runtime into one binary (runtimes/go/build.sh). */
export function buildCommand(
  runtime: Runtime,
  paths: { runtimesDir: string; functionDir: string; output: string },
): Command | undefined {
  if (languageOf(runtime) !== 'go') return undefined;
  return {
    argv: ['sh', path.posix.join(paths.runtimesDir, 'go', 'build.sh'), paths.functionDir, paths.output],
    cwd: paths.functionDir,
  };
}

/** runtimes/ of this checkout or installed package. */
export const defaultRuntimesDir: string = path.join(packageRoot, 'runtimes');

export interface LocalRuntimeOptions {
  /** Absolute path of the function's prepared code folder. */
  readonly functionDir: string;
  /** Absolute path of a folder of this function's own, outside functionDir: Python packages, Go binary. */
  readonly workDir: string;
  readonly entrypoint: string;
  readonly files: FunctionFiles;
  /** Default: defaultRuntimesDir. */
  readonly runtimesDir?: string;
  /** Default `python3`. */
  readonly python?: string;
  /** Default: the node running sless. */
  readonly node?: string;
}

export interface LocalRuntimePlan {
  /** Run once, in order, before the first start (dependency installs, then the Go build). */
  readonly prepare: readonly Command[];
  /**
   * The server. `env` holds what locates the function; the caller adds PORT, SLESS_FUNCTION_NAME,
   * SLESS_NAMESPACE, SLESS_TIMEOUT_SEC and the function's env, or SLESS_MODE=job + SLESS_EVENT for one run.
   */
  readonly run: Command & { readonly env: Readonly<Record<string, string>> };
}

/** How `sless dev` prepares and runs a function on this machine: the same steps as its image. */
export function localRuntimePlan(runtime: Runtime, opts: LocalRuntimeOptions): LocalRuntimePlan {
  const runtimesDir = opts.runtimesDir ?? defaultRuntimesDir;
  const server = path.join(runtimesDir, RUNTIME_CATALOG[runtime].server);
  const env = { SLESS_FUNCTION_DIR: opts.functionDir, SLESS_ENTRYPOINT: opts.entrypoint };
  const cwd = opts.functionDir;
  switch (languageOf(runtime)) {
    case 'python': {
      const pythonDeps = path.join(opts.workDir, 'python-deps');
      const python = opts.python ?? 'python3';
      return {
        prepare: installCommands(runtime, opts.files, { functionDir: cwd, pythonDeps, python }),
        run: { argv: [python, server], cwd, env: { ...env, PYTHONPATH: pythonDeps, PYTHONUNBUFFERED: '1' } },
      };
    }
    case 'node':
      return {
        prepare: installCommands(runtime, opts.files, { functionDir: cwd, pythonDeps: '', python: '' }),
        run: { argv: [opts.node ?? process.execPath, server], cwd, env },
      };
    case 'go': {
      const output = path.join(opts.workDir, 'server');
      const build = buildCommand(runtime, { runtimesDir, functionDir: cwd, output });
      return { prepare: build ? [build] : [], run: { argv: [output], cwd, env } };
    }
  }
}
