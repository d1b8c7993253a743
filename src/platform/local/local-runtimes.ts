// How each runtime runs on this machine for `sless dev`: the runtime server from runtimes/ started
// with the machine's own interpreter, dependencies installed into the prepared folder the way the
// generated Dockerfile installs them into the image.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Runtime } from '../../manifest/types.ts';
import { childBaseEnv, type CommandSpec } from './child-group.ts';
import type { LocalRuntimes, ServeOptions } from './ports.ts';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

type Language = 'python' | 'node' | 'go';

function languageOf(runtime: Runtime): Language {
  if (runtime.startsWith('python')) return 'python';
  if (runtime.startsWith('nodejs')) return 'node';
  return 'go';
}

/** The files whose change means a prepared folder must be rebuilt (the local "base image"). */
const SERVER_FILES: Record<Language, readonly string[]> = {
  python: ['runtimes/python/server.py'],
  node: ['runtimes/node/server.mjs'],
  go: ['runtimes/go/runtime/runtime.go', 'runtimes/go/runtime/go.mod'],
};

export function localRuntimes(opts: { root?: string; python?: string; node?: string; go?: string } = {}): LocalRuntimes {
  const root = opts.root ?? projectRoot;
  const python = opts.python ?? 'python3';
  const node = opts.node ?? process.execPath;
  const versions = new Map<Runtime, string>();
  return {
    versionOf(runtime) {
      let v = versions.get(runtime);
      if (!v) {
        const h = createHash('sha256').update(runtime);
        for (const f of SERVER_FILES[languageOf(runtime)]) {
          try {
            h.update(readFileSync(path.join(root, f)));
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
      const has = (f: string) => files.includes(f);
      const env = childBaseEnv(process.env);
      const step = (command: string, args: string[]): CommandSpec => ({ command, args, cwd: appDir, env });
      switch (languageOf(runtime)) {
        case 'python':
          return has('requirements.txt')
            ? [step(python, ['-m', 'pip', 'install', '--no-input', '--disable-pip-version-check', '--quiet', '--target', appDir, '-r', 'requirements.txt'])]
            : [];
        case 'node':
          if (!has('package.json')) return [];
          return [
            has('package-lock.json')
              ? step('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'])
              : step('npm', ['install', '--omit=dev', '--no-audit', '--no-fund']),
          ];
        case 'go':
          return [step('sh', [path.join(root, 'runtimes/go/build.sh'), appDir, path.join(appDir, '.sless-function')])];
      }
    },
    command(runtime, appDir, serve: ServeOptions) {
      const base = { cwd: appDir, env: serve.env };
      switch (languageOf(runtime)) {
        case 'python':
          return { ...base, command: python, args: [path.join(root, 'runtimes', runtime, 'server.py')] };
        case 'node':
          return { ...base, command: node, args: [path.join(root, 'runtimes', runtime, 'server.js')] };
        case 'go':
          return { ...base, command: path.join(appDir, '.sless-function'), args: [] };
      }
    },
  };
}
