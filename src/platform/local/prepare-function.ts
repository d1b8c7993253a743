// The local "build": a function's code laid out under <data-dir>/builds/<build key>/ with its
// dependencies installed. Content-addressed: the same code, runtime and runtime version give the
// same key, so a restart of `sless dev`, a redeploy or a second function with the same code reuses the
// folder instead of building again. A folder is built under a temporary name and renamed into place
// when complete, so a half-built folder is never used.
//
//   builds/<key>/source/   the code exactly as hashed (what /v1 .../source returns)
//   builds/<key>/app/      the code plus node_modules (what the runtime server runs)
//   builds/<key>/work/     Python packages, the Go binary (see local-runtimes.ts)
import { createHash, randomBytes } from 'node:crypto';
import { chmod, cp, mkdir, readdir, readFile, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { linkLayoutProblems, type LayoutEntry } from '../../source/link-layout.ts';
import type { CodeFile, UnpackedCode } from '../types.ts';
import type { ChildGroup, CommandSpec } from './child-group.ts';
import type { Logger } from './logger.ts';

export interface PreparedFunction {
  readonly buildKey: string;
  readonly dir: string;
  readonly sourceDir: string;
  readonly appDir: string;
  /** False when an existing folder was reused. */
  readonly built: boolean;
}

/**
 * Where a build's code comes from: files to write (paths relative to the function folder; included
 * files start with "/" + their repo path), or an upload already unpacked on the data dir's file
 * system, moved into place as it is (its folder stays the caller's to remove when it was not used).
 */
export type CodeSource = (() => AsyncIterable<CodeFile> | Iterable<CodeFile>) | Pick<UnpackedCode, 'root' | 'files'>;

export interface PrepareRequest {
  readonly buildKey: string;
  readonly files: CodeSource;
  /** Dependency installs to run in the app folder (may be empty). */
  readonly installSteps: (appDir: string, files: readonly string[]) => readonly CommandSpec[];
  readonly label: string;
}

/** The build key: everything that makes a prepared folder different. */
export function buildKeyOf(parts: { runtime: string; codeHash: string; runtimeVersion: string }): string {
  return createHash('sha256').update(`${parts.runtime}\n${parts.codeHash}\n${parts.runtimeVersion}\n`).digest('hex').slice(0, 32);
}

/** Where a file lands inside the function folder: included files keep their repository path. */
export function placeOf(filePath: string): string {
  const rel = filePath.startsWith('/') ? filePath.slice(1) : filePath;
  const parts = rel.split('/');
  if (rel === '' || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`refusing to write "${filePath}": not a plain relative path`);
  }
  return parts.join(path.sep);
}

/**
 * Writes the files under `root` (fresh and empty) so that writing never follows a link: regular
 * files first, each created exclusively (O_EXCL: never through a link at its own name) while no link
 * exists yet; then, once every path is known and the layout is checked (nothing under a link, every
 * link resolving inside `root`, through the others too), the links. Returns the posix paths written.
 */
export async function writeCode(root: string, files: AsyncIterable<CodeFile> | Iterable<CodeFile>): Promise<string[]> {
  const written: string[] = [];
  const layout: LayoutEntry[] = [];
  const links: { abs: string; target: string }[] = [];
  await mkdir(root, { recursive: true });
  for await (const f of files) {
    const rel = placeOf(f.path);
    const posix = rel.split(path.sep).join('/');
    const abs = path.join(root, rel);
    if (f.mode === '120000') {
      const target = f.content.toString('utf8');
      layout.push({ path: posix, mode: f.mode, target });
      links.push({ abs, target });
    } else {
      layout.push({ path: posix, mode: f.mode });
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, f.content, { flag: 'wx', mode: f.mode === '100755' ? 0o755 : 0o644 });
      if (f.mode === '100755') await chmod(abs, 0o755);
    }
    written.push(posix);
  }
  const problems = linkLayoutProblems(layout);
  if (problems.length > 0) throw new Error(`refusing to write the code: ${problems.map((p) => p.message).join('; ')}`);
  for (const l of links) {
    await mkdir(path.dirname(l.abs), { recursive: true });
    await symlink(l.target, l.abs);
  }
  return written;
}

/** Moves unpacked code (links already checked and created last by the unpacker) to `sourceDir`. */
async function moveUnpacked(code: Pick<UnpackedCode, 'root' | 'files'>, sourceDir: string): Promise<string[]> {
  await mkdir(path.dirname(sourceDir), { recursive: true });
  await rename(code.root, sourceDir);
  return code.files.map((f) => f.path);
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

export class FunctionPreparer {
  readonly #buildsDir: string;
  readonly #children: ChildGroup;
  readonly #logger: Logger;
  readonly #inFlight = new Map<string, Promise<PreparedFunction>>();

  constructor(opts: { dataDir: string; children: ChildGroup; logger: Logger }) {
    this.#buildsDir = path.join(opts.dataDir, 'builds');
    this.#children = opts.children;
    this.#logger = opts.logger;
  }

  dirOf(buildKey: string): { dir: string; sourceDir: string; appDir: string } {
    const dir = path.join(this.#buildsDir, buildKey);
    return { dir, sourceDir: path.join(dir, 'source'), appDir: path.join(dir, 'app') };
  }

  async isPrepared(buildKey: string): Promise<boolean> {
    return exists(path.join(this.dirOf(buildKey).dir, '.ready'));
  }

  /** When the folder for this key was completed (its build time), or undefined when it is not there. */
  async preparedAt(buildKey: string): Promise<string | undefined> {
    return stat(path.join(this.dirOf(buildKey).dir, '.ready')).then(
      (s) => s.mtime.toISOString(),
      () => undefined,
    );
  }

  /** Reuses the folder for this key when complete, else builds it (once, however many ask). */
  prepare(req: PrepareRequest): Promise<PreparedFunction> {
    const running = this.#inFlight.get(req.buildKey);
    if (running) return running;
    const p = this.#prepare(req).finally(() => this.#inFlight.delete(req.buildKey));
    this.#inFlight.set(req.buildKey, p);
    return p;
  }

  async #prepare(req: PrepareRequest): Promise<PreparedFunction> {
    const final = this.dirOf(req.buildKey);
    if (await this.isPrepared(req.buildKey)) return { buildKey: req.buildKey, ...final, built: false };
    const tmp = path.join(this.#buildsDir, `.tmp-${req.buildKey}-${randomBytes(4).toString('hex')}`);
    const sourceDir = path.join(tmp, 'source');
    const appDir = path.join(tmp, 'app');
    try {
      const written = typeof req.files === 'function' ? await writeCode(sourceDir, req.files()) : await moveUnpacked(req.files, sourceDir);
      await cp(sourceDir, appDir, { recursive: true, verbatimSymlinks: true });
      for (const step of req.installSteps(appDir, written)) {
        const shown = [step.command, ...step.args].map((a) => (a.startsWith(tmp) ? path.relative(appDir, a) || '.' : a)).join(' ');
        this.#logger.info(`${req.label}: installing dependencies: ${shown}`);
        const child = this.#children.spawn({ ...step, cwd: step.cwd || appDir }, { label: req.label, logger: this.#logger, quiet: true });
        const status = await child.exited;
        if (status.code !== 0) {
          throw new Error(
            `${req.label}: "${shown}" failed (exit ${status.code ?? status.signal}): ${child.tail().trim().split('\n').slice(-8).join('\n')}`,
          );
        }
      }
      await writeFile(path.join(tmp, '.ready'), `${new Date().toISOString()}\n`);
      await rm(final.dir, { recursive: true, force: true });
      await rename(tmp, final.dir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    return { buildKey: req.buildKey, ...final, built: true };
  }

  /**
   * Deletes prepared folders not in `keep` and leftovers of interrupted builds (never a build under
   * way). `keep` must hold every folder a process runs from: `sless dev` passes what its functions
   * and its runner use, at start and whenever a folder may have stopped being used.
   */
  async prune(keep: ReadonlySet<string>): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.#buildsDir);
    } catch {
      return [];
    }
    const building = (n: string) => this.#inFlight.has(n) || [...this.#inFlight.keys()].some((k) => n.startsWith(`.tmp-${k}-`));
    const gone = names.filter((n) => !keep.has(n) && !building(n));
    await Promise.all(gone.map((n) => rm(path.join(this.#buildsDir, n), { recursive: true, force: true })));
    return gone;
  }

  /** The pristine code of a prepared folder, as CodeFiles (for /v1 .../source). */
  async readSource(buildKey: string): Promise<CodeFile[]> {
    const root = this.dirOf(buildKey).sourceDir;
    const out: CodeFile[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      for (const d of await readdir(dir, { withFileTypes: true })) {
        const abs = path.join(dir, d.name);
        const p = rel ? `${rel}/${d.name}` : d.name;
        if (d.isDirectory()) await walk(abs, p);
        else if (d.isSymbolicLink()) out.push({ path: p, mode: '120000', content: Buffer.from(await readlink(abs), 'utf8') });
        else if (d.isFile()) {
          const mode = ((await stat(abs)).mode & 0o100) !== 0 ? '100755' : '100644';
          out.push({ path: p, mode, content: await readFile(abs) });
        }
      }
    };
    await walk(root, '');
    return out.sort((a, b) => (a.path < b.path ? -1 : 1));
  }
}
