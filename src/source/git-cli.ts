// The git command line as a fast path for the git cache, used where a `git` binary is installed
// (the controller image has one) with isomorphic-git as the fallback. Measured with
// test/bench/sync.bench.ts on a 1,000-folder repository: isomorphic-git spends most of a cold sync
// indexing the pack in JS (~1.4 s of a 1.6 s fetch; the download is ~0.2 s) and then reading each
// tree and blob with several file-system calls per object (~2 s); `git fetch` takes ~0.3 s,
// `git ls-tree -r -t` lists every tree in ~40 ms and `git cat-file --batch` reads a thousand blobs in
// one process. Credentials travel in the environment (GIT_CONFIG_* http.extraHeader), never in argv;
// the user's and the system's git configuration are ignored; nothing ever prompts. The TargetPolicy
// holds as on the isomorphic-git path: the URL is checked, the host is resolved and checked here and
// git connects to exactly those addresses (http.curloptResolve), and redirects are not followed.
import { spawn } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { GitSourceError } from './git-source-error.ts';
import type { TargetPolicy } from './target-policy.ts';
import type { TreeEntry, TreeEntryMode } from './source-tree.ts';
import { DEFAULT_TREE_LIMITS, TreeBudget, type TreeLimits } from './tree-limits.ts';

export interface GitCliRunOptions {
  readonly gitdir: string;
  /** Extra HTTP headers (Authorization), passed through the environment. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Standard input; a promise starts the process at once and writes the input when it settles (undefined: none). */
  readonly input?: string | Buffer | Promise<Buffer | undefined>;
  readonly timeoutMs?: number;
  /** More `git -c` settings, passed through the environment. */
  readonly config?: ReadonlyArray<readonly [string, string]>;
  /**
   * Takes standard output as it comes instead of collecting it (`stdout` is then empty); when it
   * throws, git is killed and the run rejects with that error.
   */
  readonly onStdout?: (chunk: Buffer) => void;
}

export interface GitCliResult {
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly code: number | null;
}

const DEFAULT_TIMEOUT_MS = 120_000;
let detected: Promise<boolean> | undefined;

/** Whether `git` runs here (checked once per process). */
export function gitCliAvailable(): Promise<boolean> {
  detected ??= run(['--version'], { gitdir: '.', timeoutMs: 5_000 }).then(
    (r) => r.code === 0 && r.stdout.toString().startsWith('git version'),
    () => false,
  );
  return detected;
}

function gitEnv(
  headers: Readonly<Record<string, string>> | undefined,
  extra: GitCliRunOptions['config'] = [],
): NodeJS.ProcessEnv {
  const config: Array<readonly [string, string]> = [
    ...extra,
    ['http.followRedirects', 'false'],
    ['credential.helper', ''],
    ['core.askPass', ''],
    ['protocol.version', '2'],
    ...Object.entries(headers ?? {}).map(([k, v]): [string, string] => ['http.extraHeader', `${k}: ${v}`]),
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  // Proxies configured for the process apply to git too.
  for (const k of ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'])
    if (process.env[k]) env[k] = process.env[k];
  return env;
}

/** Runs `git --git-dir=<gitdir> args...`; resolves with its output whatever the exit code (rejects only when it cannot start). */
export function run(args: readonly string[], opts: GitCliRunOptions): Promise<GitCliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${opts.gitdir}`, ...args], {
      env: gitEnv(opts.headers, opts.config),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    let failure: unknown;
    const onStdout = opts.onStdout;
    child.stdout.on('data', (b: Buffer) => {
      if (!onStdout) return void out.push(b);
      if (failure !== undefined) return;
      try {
        onStdout(b);
      } catch (err) {
        failure = err;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure !== undefined) return reject(failure instanceof Error ? failure : new Error(String(failure)));
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), code });
    });
    child.stdin.on('error', () => undefined);
    const input = opts.input;
    if (input instanceof Promise) {
      input.then(
        (b) => child.stdin.end(b ?? ''),
        () => child.stdin.end(),
      );
    } else child.stdin.end(input ?? '');
  });
}

/**
 * Checks `url` with the policy and resolves its host through it: the `http.curloptResolve` entry that
 * makes git connect to exactly the checked addresses (none for an address literal). Throws
 * TargetRefusedError.
 */
export async function pinnedResolve(
  policy: TargetPolicy,
  url: URL,
): Promise<Array<readonly [string, string]>> {
  policy.checkUrl(url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return [];
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    policy.lookup(host, { all: true }, (err, list) =>
      err ? reject(err) : resolve(list as unknown as LookupAddress[]),
    ),
  );
  if (addresses.length === 0) return [];
  return [
    [
      'http.curloptResolve',
      `${host}:${port}:${addresses.map((a) => (a.family === 6 ? `[${a.address}]` : a.address)).join(',')}`,
    ],
  ];
}

/** Maps a failed `git fetch` to a GitSourceError for `url` (already redacted). */
export function classifyGitCliError(stderr: string, url: string, stage: string): GitSourceError {
  const text = stderr.replaceAll(/\/\/[^@/\s]*@/g, '//').trim();
  const last = text.split('\n').filter(Boolean).slice(-2).join('; ');
  const status = /returned error: (\d{3})/.exec(text)?.[1];
  if (
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled/i.test(text) ||
    status === '401' ||
    status === '403'
  ) {
    return new GitSourceError(
      'auth',
      `git ${stage} of ${url} was refused${status ? ` (HTTP ${status})` : ''}: the credentials are missing or wrong, or lack read access; check the repository's secretRef (token, or username + password)`,
    );
  }
  if (status === '404' || /repository '.*' not found/i.test(text)) {
    return new GitSourceError(
      'not-found',
      `git ${stage} of ${url}: no repository at this URL (HTTP 404); check spec.url, or the credentials if the repository is private`,
    );
  }
  if (/couldn't find remote ref/i.test(text)) {
    return new GitSourceError(
      'branch-not-found',
      `git ${stage} of ${url}: the branch does not exist (deleted, or never pushed); push it or fix spec.branch`,
    );
  }
  if (
    /Could not resolve host|Failed to connect|Connection refused|Connection reset|timed out|Operation too slow|Empty reply/i.test(
      text,
    ) ||
    (status !== undefined && Number(status) >= 500)
  ) {
    return new GitSourceError(
      'unreachable',
      `git ${stage} of ${url}: the server cannot be reached or failed (${last}); will retry`,
    );
  }
  if (/not valid: is this a git repository|unexpected|redirect/i.test(text) || status) {
    return new GitSourceError(
      'not-git',
      `git ${stage} of ${url}: the server did not answer as a git smart-HTTP server (${last}); check that spec.url is the repository's clone URL (usually ending in .git)`,
    );
  }
  return new GitSourceError('fetch-failed', `git ${stage} of ${url} failed: ${last || 'no output'}`);
}

const MODES = new Set<string>(['100644', '100755', '120000', '040000', '160000']);

/**
 * Every tree of `commit` from one `git ls-tree -r -t -z` listing: tree oid → its entries, plus the
 * root tree's oid. Fills a cold TreeMemo in one process instead of one object read per folder. The
 * listing is parsed as it streams and held to `limits` (tree-limits.ts): git is stopped at the first
 * path past one (TreeLimitError), so a tree nested 20,000 deep costs a few kilobytes, not 400 MB.
 */
export async function listAllTrees(
  gitdir: string,
  commit: string,
  limits: TreeLimits = DEFAULT_TREE_LIMITS,
): Promise<{ root: string; trees: Map<string, TreeEntry[]> }> {
  const parser = new TreeListingParser(limits);
  const [rootResult, listing] = await Promise.all([
    run(['rev-parse', `${commit}^{tree}`], { gitdir }),
    run(['ls-tree', '-r', '-t', '-z', '--full-tree', commit], { gitdir, onStdout: (chunk) => parser.push(chunk) }),
  ]);
  if (rootResult.code !== 0 || listing.code !== 0)
    throw new Error(`git ls-tree ${commit} failed: ${(rootResult.stderr || listing.stderr).trim()}`);
  const root = rootResult.stdout.toString().trim();
  return { root, trees: parser.trees(root) };
}

/** Parses `ls-tree -r -t -z` output into tree oid → entries (in git's order). Pure. */
export function parseTreeListing(root: string, listing: string, limits: TreeLimits = DEFAULT_TREE_LIMITS): Map<string, TreeEntry[]> {
  const parser = new TreeListingParser(limits);
  parser.push(Buffer.from(listing, 'utf8'));
  return parser.trees(root);
}

/** `ls-tree -r -t -z` records as they stream in, each path checked against the limits before it is kept. */
export class TreeListingParser {
  private readonly byDir = new Map<string, TreeEntry[]>([['', []]]);
  private readonly dirOid = new Map<string, string>();
  private readonly budget: TreeBudget;
  private rest: Buffer = Buffer.alloc(0);
  /** Longest record accepted: mode, type, oid and a path at the limit. */
  private readonly maxRecord: number;

  constructor(limits: TreeLimits) {
    this.budget = new TreeBudget(limits);
    this.maxRecord = limits.maxPathBytes + 128;
  }

  push(chunk: Buffer): void {
    let data = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    let at = 0;
    for (let nul = data.indexOf(0, at); nul >= 0; nul = data.indexOf(0, at)) {
      if (nul > at) this.record(data.toString('utf8', at, nul));
      at = nul + 1;
    }
    data = data.subarray(at);
    // A record without its end yet: one longer than any path allowed is refused before it grows.
    if (data.length > this.maxRecord) this.record(data.toString('utf8', 0, this.maxRecord));
    this.rest = Buffer.from(data);
  }

  private record(record: string): void {
    const tab = record.indexOf('\t');
    const [mode = '', , oid = ''] = record.slice(0, tab).split(' ');
    const filePath = record.slice(tab + 1);
    this.budget.path(filePath);
    const slash = filePath.lastIndexOf('/');
    const dir = slash < 0 ? '' : filePath.slice(0, slash);
    const entry: TreeEntry = {
      name: filePath.slice(slash + 1),
      mode: (MODES.has(mode) ? mode : '100644') as TreeEntryMode,
      oid,
    };
    let list = this.byDir.get(dir);
    if (!list) this.byDir.set(dir, (list = []));
    list.push(entry);
    if (mode === '040000') {
      this.dirOid.set(filePath, oid);
      if (!this.byDir.has(filePath)) this.byDir.set(filePath, []);
    }
  }

  /** Tree oid → entries, the root under `root`. */
  trees(root: string): Map<string, TreeEntry[]> {
    this.dirOid.set('', root);
    const trees = new Map<string, TreeEntry[]>();
    for (const [dir, entries] of this.byDir) {
      const oid = this.dirOid.get(dir);
      if (oid) trees.set(oid, entries);
    }
    return trees;
  }
}

const SMALL_BATCH = 8;

/**
 * Reads blobs through `git cat-file --batch`, gathering the reads asked for in the same turn of the
 * event loop into one process (a snapshot asks for a thousand function.yaml files at once).
 */
export class BlobBatcher {
  private pending = new Map<string, Array<{ resolve: (b: Buffer) => void; reject: (e: unknown) => void }>>();
  private scheduled = false;

  /**
   * `inProcess` reads batches of at most SMALL_BATCH blobs without starting a process (a one-change
   * sync reads one or two manifests: a process start costs more than reading them from the pack).
   */
  constructor(
    private readonly gitdir: string,
    private readonly inProcess?: (oid: string) => Promise<Buffer>,
  ) {}

  read(oid: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(oid);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(oid, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    const oids = [...batch.keys()];
    const inProcess = this.inProcess;
    if (inProcess && oids.length <= SMALL_BATCH) {
      for (const [oid, waiters] of batch) {
        const read = inProcess(oid);
        for (const w of waiters) read.then(w.resolve, w.reject);
      }
      return;
    }
    try {
      const result = await run(['cat-file', '--batch'], {
        gitdir: this.gitdir,
        input: `${oids.join('\n')}\n`,
      });
      if (result.code !== 0) throw new Error(`git cat-file --batch failed: ${result.stderr.trim()}`);
      const blobs = parseCatFileBatch(result.stdout);
      for (const [oid, waiters] of batch) {
        const blob = blobs.get(oid);
        for (const w of waiters) {
          if (blob) w.resolve(blob);
          else w.reject(new Error(`git object ${oid} is missing from the cache`));
        }
      }
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    }
  }
}

/** Parses `git cat-file --batch` output: `<oid> <type> <size>\n<content>\n` or `<oid> missing\n`. Pure. */
export function parseCatFileBatch(out: Buffer): Map<string, Buffer> {
  const blobs = new Map<string, Buffer>();
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(0x0a, at);
    if (nl < 0) break;
    const [oid = '', type, size] = out.subarray(at, nl).toString('utf8').split(' ');
    at = nl + 1;
    if (type === 'missing' || size === undefined) continue;
    const n = Number(size);
    blobs.set(oid, Buffer.from(out.subarray(at, at + n)));
    at += n + 1;
  }
  return blobs;
}
