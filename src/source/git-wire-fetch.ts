// One incremental fetch into a shallow cache over protocol v2 (git-wire.ts): a single POST asking for
// the new head with the cached head as "have", the pack indexed by `git index-pack --stdin --fix-thin`
// (git's own indexer: a thin pack's bases come from the cache), the `shallow` file updated as
// `git fetch --depth=1` updates it. With `verifyTip` an ls-refs POST runs beside the fetch, so a head
// named by a webhook is taken only when it still is the branch tip (a late delivery never moves the
// cache back). Refs are the caller's to write.
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { HttpClient } from 'isomorphic-git';
import { run as runGit } from './git-cli.ts';
import { fetchRequest, lsRefsRequest, parseFetchResponse, parseLsRefs, postCommand } from './git-wire.ts';
import type { FetchResponse } from './git-wire.ts';

export interface WireFetchInput {
  readonly http: HttpClient;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly gitdir: string;
  readonly branch: string;
  readonly want: string;
  /** The cached head, offered as "have". */
  readonly have: string;
  /** Also ask the branch tip, and fetch only when it is `want`. */
  readonly verifyTip: boolean;
}

export type WireFetchResult =
  | { readonly fetched: true; readonly packBytes: number }
  | { readonly fetched: false; readonly tip: string | undefined };

/** Fetches `want` into the cache, or reports the tip that differs from it. Throws WireUnsupportedError, FetchTooLargeError. */
export async function wireFetch(input: WireFetchInput): Promise<WireFetchResult> {
  const shallowFile = path.join(input.gitdir, 'shallow');
  const shallow = await readShallow(shallowFile);
  const exchange = Promise.all([
    postCommand(input.http, input.url, input.headers, fetchRequest({ want: input.want, haves: [input.have], shallow, depth: 1 })),
    input.verifyTip ? postCommand(input.http, input.url, input.headers, lsRefsRequest(input.branch)).then(parseLsRefs) : undefined,
  ]).then(([response, refs]) => {
    const tip = refs?.get(`refs/heads/${input.branch}`);
    return refs && tip !== input.want ? { tip } : { fetched: parseFetchResponse(response) };
  });
  // index-pack starts beside the requests (a process start costs about as much as the round trip) and
  // reads the pack when it is there; it gets no input when there is nothing to index.
  const indexed = indexPack(
    input.gitdir,
    exchange.then((r) => r.fetched?.pack, () => undefined),
  );
  const result = await exchange.catch(async (err: unknown) => {
    await indexed.catch(() => undefined);
    throw err;
  });
  const ok = await indexed.then(
    () => true,
    (err: unknown) => {
      if (result.fetched) throw err;
      return false;
    },
  );
  if (!result.fetched || !ok) return { fetched: false, tip: result.tip };
  await writeShallow(shallowFile, nextShallow(shallow, result.fetched));
  return { fetched: true, packBytes: result.fetched.pack.length };
}

/** The cache's shallow boundary after a fetch: the old one minus what was unshallowed, plus the new. Pure. */
export function nextShallow(before: readonly string[], res: Pick<FetchResponse, 'shallow' | 'unshallow'>): string[] {
  const gone = new Set(res.unshallow);
  return [...new Set([...before.filter((o) => !gone.has(o)), ...res.shallow])].sort();
}

async function readShallow(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l));
}

async function writeShallow(file: string, oids: readonly string[]): Promise<void> {
  const tmp = `${file}.sless-tmp`;
  await writeFile(tmp, oids.map((o) => `${o}\n`).join(''));
  await rename(tmp, file);
}

/** `git index-pack --stdin --fix-thin`; with no pack it ends at once, and its temporary file is removed. */
async function indexPack(gitdir: string, pack: Promise<Buffer | undefined>): Promise<void> {
  const result = await runGit(['index-pack', '--stdin', '--fix-thin'], { gitdir, input: pack });
  if (result.code === 0) return;
  const dir = path.join(gitdir, 'objects', 'pack');
  const leftovers = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.startsWith('tmp_pack_'));
  await Promise.all(leftovers.map((f) => rm(path.join(dir, f), { force: true })));
  throw new Error(`git index-pack of the fetched pack failed: ${result.stderr.trim()}`);
}
