// Runs the runtime servers of runtimes/ as real processes for the runtimes*.test.ts suites: one
// target per runtime, each serving the fixtures in test/fixtures/runtimes/ (which all behave alike).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Runtime } from '../../src/manifest/types.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Launch {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface Target {
  readonly runtime: Runtime;
  /** Compiles what must be compiled (Go); run once before launching. */
  prepare(): Promise<void>;
  /** The handler taking (event, context). */
  contextHandler(): Launch;
  /** A handler taking the event only. */
  eventHandler(): Launch;
  /** A launch whose entrypoint does not exist (absent for Go, where the build catches it). */
  missingHandler?(): Launch;
  /** An entrypoint in a sub-folder whose module imports a sibling (Go: go-event has a package of its own). */
  nestedHandler?(): Launch;
}

interface ScriptedTarget {
  readonly runtime: Runtime;
  readonly interpreter: string;
  readonly script: string;
  readonly fixture: string;
  /** Entrypoint of the one-argument handler. */
  readonly one: string;
  /** Entrypoint of a handler in a sub-folder. */
  readonly nested: string;
}

// Relative paths on purpose: `SLESS_FUNCTION_DIR=./dir node runtimes/nodejs20/server.js`, run from the
// repository root, is the documented way to serve a folder.
function scripted(t: ScriptedTarget): Target {
  const launch = (entrypoint: string): Launch => ({
    argv: [t.interpreter, t.script],
    env: { SLESS_FUNCTION_DIR: `./test/fixtures/runtimes/${t.fixture}`, SLESS_ENTRYPOINT: entrypoint },
  });
  return {
    runtime: t.runtime,
    prepare: async () => {},
    contextHandler: () => launch('handler.handle'),
    eventHandler: () => launch(t.one),
    missingHandler: () => launch('handler.nothing_here'),
    nestedHandler: () => launch(t.nested),
  };
}

const GO_FIXTURES = ['go-context', 'go-event'] as const;

/** A digest of everything the Go fixture binaries are built from. */
async function goSourcesDigest(): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(path.join(repoRoot, dir), { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    );
    for (const e of entries) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) await walk(rel);
      else hash.update(`${rel}\0`).update(await readFile(path.join(repoRoot, rel)));
    }
  };
  await walk('runtimes/go');
  for (const f of GO_FIXTURES) await walk(`test/fixtures/runtimes/${f}`);
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the Go fixtures once per source digest into ~/.cache/sless-test, shared by the test files
 * running in parallel (a mkdir lock), so a cold machine compiles the standard library once, not twice.
 */
async function buildGoFixtures(): Promise<string> {
  const dir = path.join(os.homedir(), '.cache', 'sless-test', 'go-runtime-fixtures', await goSourcesDigest());
  const done = path.join(dir, 'done');
  const lock = `${dir}.lock`;
  await mkdir(path.dirname(dir), { recursive: true });
  for (const until = Date.now() + 300_000; ;) {
    if (existsSync(done)) return dir;
    try {
      await mkdir(lock);
      break;
    } catch {
      // A lock older than any build is left over from a killed run.
      const age = Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now());
      if (age > 600_000) await rm(lock, { recursive: true, force: true });
      if (Date.now() > until)
        throw new Error(`gave up waiting for ${lock} (remove it if no test is building)`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (existsSync(done)) return dir;
    await mkdir(dir, { recursive: true });
    for (const fixture of GO_FIXTURES) {
      const argv = [
        'sh',
        'runtimes/go/build.sh',
        `test/fixtures/runtimes/${fixture}`,
        path.join(dir, fixture),
      ];
      const run = await runOnce(argv, {}, 300_000);
      if (run.code !== 0)
        throw new Error(`building ${fixture} with runtimes/go/build.sh failed:\n${run.stderr}`);
    }
    await writeFile(done, '');
    return dir;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

function goTarget(): Target {
  let dir = '';
  return {
    runtime: 'go1.23',
    async prepare() {
      dir = await buildGoFixtures();
    },
    contextHandler: () => ({ argv: [path.join(dir, 'go-context')], env: {} }),
    eventHandler: () => ({ argv: [path.join(dir, 'go-event')], env: {} }),
  };
}

// python3 (3.11 on Debian bookworm) serves both Python runtimes unless SLESS_TEST_PYTHON312 names a
// 3.12 interpreter; the local node serves both Node runtimes, the local go the Go one.
export const TARGETS: readonly Target[] = [
  ...(['python3.11', 'python3.12'] as const).map((runtime) =>
    scripted({
      runtime,
      interpreter: (runtime === 'python3.12' && process.env.SLESS_TEST_PYTHON312) || 'python3',
      script: `runtimes/${runtime}/server.py`,
      fixture: 'python',
      one: runtime === 'python3.11' ? 'handler.one' : 'handler.one_async',
      nested: 'pkg.nested.handle',
    }),
  ),
  ...(['nodejs20', 'nodejs22'] as const).map((runtime) =>
    scripted({
      runtime,
      interpreter: process.execPath,
      script: `runtimes/${runtime}/server.js`,
      fixture: 'node',
      one: runtime === 'nodejs20' ? 'handler.one' : 'esm.one',
      nested: 'lib/nested.handle',
    }),
  ),
  goTarget(),
];

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function collect(child: ChildProcess): {
  out: () => string;
  err: () => string;
  done: Promise<number | null>;
} {
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const done = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { out: () => out, err: () => err, done };
}

/** Runs a command to its end (job mode, builds) from the repository root. */
export async function runOnce(
  argv: readonly string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<Finished> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const io = collect(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const code = await io.done;
    return { code, stdout: io.out(), stderr: io.err() };
  } finally {
    clearTimeout(timer);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface RunningServer {
  readonly url: string;
  readonly pid: number;
  readonly stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts a runtime server on a free port and waits until GET /health answers. */
export async function startServer(launch: Launch, env: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const [command, ...args] = launch.argv as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, ...launch.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const io = collect(child);
  let exited = false;
  void io.done.then(
    () => (exited = true),
    () => (exited = true),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    return io.done;
  };
  const until = Date.now() + 20_000;
  for (;;) {
    if (exited) throw new Error(`${launch.argv.join(' ')} exited before serving:\n${io.err()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return { url, pid: child.pid as number, stderr: io.err, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stop();
      throw new Error(`${launch.argv.join(' ')} did not answer /health within 20 s:\n${io.err()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
