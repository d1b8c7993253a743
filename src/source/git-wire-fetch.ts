// One incremental fetch into a shallow cache over protocol v2 (git-wire.ts): a single POST asking for
// the new head with the cached head as "have", the (thin) pack indexed in this process when small
// (pack-index.ts: no git process for a one-change fetch) or else by `git index-pack --stdin --fix-thin`
// (a thin pack's bases come from the cache either way), the `shallow` file updated as
// `git fetch --depth=1` updates it. With `verifyTip` (a head named by a webhook) the head is taken only
// when an ls-refs POST, sent beside the fetch POST (no extra round trip), says it is the branch tip: a
// hint never decides what the branch is (issue 31 item 3: a child of the cached head pushed to another
// branch, then deleted, was taken as the branch; a late delivery must not move the cache back either).
// Refs are the caller's to write. fetchHistory is the same fetch into a repository with whole history
// (previews' merge bases, preview-source.ts): a few wants, no depth.
import { open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { HttpClient } from 'isomorphic-git';
import { run as runGit } from './git-cli.ts';
import { fetchRequest, lsRefsRequest, parseFetchResponse, parseLsRefs, postCommand } from './git-wire.ts';
import type { FetchResponse } from './git-wire.ts';
import { indexPack, ThinPackError } from './pack-index.ts';
import type { IndexedPack, PackBase } from './pack-index.ts';

/** Reads an object of the cache (a thin pack's delta base). */
export type ReadObject = (oid: string) => Promise<PackBase>;

/** Packs up to this size are indexed in this process; larger ones by `git index-pack` (faster in bulk). */
const IN_PROCESS_MAX_BYTES = 2 * 1024 * 1024;

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
  /** Reads a cached object: the bases of a thin pack's deltas. */
  readonly readObject: ReadObject;
}

export type WireFetchResult =
  | {
      readonly fetched: true;
      readonly packBytes: number;
      /** The fetched objects, when the pack was indexed in this process. */
      readonly objects?: ReadonlyMap<string, PackBase>;
    }
  | { readonly fetched: false; readonly tip: string | undefined };

/** Fetches `want` into the cache, or reports the tip that differs from it. Throws WireUnsupportedError, FetchTooLargeError. */
export async function wireFetch(input: WireFetchInput): Promise<WireFetchResult> {
  const shallowFile = path.join(input.gitdir, 'shallow');
  const shallow = await readShallow(shallowFile);
  const tipAsked = input.verifyTip ? branchTip(input) : undefined;
  // Settled even when the fetch fails first (no unhandled rejection); awaited below.
  tipAsked?.catch(() => undefined);
  const response = await postCommand(input.http, input.url, input.headers, fetchRequest({ want: input.want, haves: [input.have], shallow, depth: 1 }));
  if (tipAsked) {
    const tip = await tipAsked;
    if (tip !== input.want) return { fetched: false, tip };
  }
  const fetched = parseFetchResponse(response);
  const indexed = fetched.pack.length <= IN_PROCESS_MAX_BYTES ? await indexInProcess(fetched.pack, input.readObject).catch(() => undefined) : undefined;
  if (indexed) await storeIndexed(input.gitdir, indexed);
  else await gitIndexPack(input.gitdir, fetched.pack);
  await writeShallow(shallowFile, nextShallow(shallow, fetched));
  return { fetched: true, packBytes: fetched.pack.length, ...(indexed ? { objects: indexed.objects } : {}) };
}

export interface HistoryFetchInput {
  readonly http: HttpClient;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A repository with whole history (no `shallow` file): what it lacks of `wants` comes, history included. */
  readonly gitdir: string;
  readonly wants: readonly [string, ...string[]];
  /** Commits the repository holds (its refs), offered as "have". */
  readonly haves: readonly string[];
  readonly readObject: ReadObject;
}

/** Fetches `wants` with their whole history into a full (not shallow) repository: one POST. Throws WireUnsupportedError. */
export async function fetchHistory(input: HistoryFetchInput): Promise<void> {
  const [want, ...alsoWant] = input.wants;
  const { pack } = parseFetchResponse(await postCommand(input.http, input.url, input.headers, fetchRequest({ want, alsoWant, haves: input.haves, shallow: [] })));
  const indexed = pack.length <= IN_PROCESS_MAX_BYTES ? await indexInProcess(pack, input.readObject).catch(() => undefined) : undefined;
  if (indexed) await storeIndexed(input.gitdir, indexed);
  else await gitIndexPack(input.gitdir, pack);
}

/** The tips of `branches` as the server lists them now (one ls-refs POST); a branch it lacks is not in the map. */
export async function branchTips(http: HttpClient, url: string, headers: Readonly<Record<string, string>>, branches: readonly string[]): Promise<Map<string, string>> {
  const refs = parseLsRefs(await postCommand(http, url, headers, lsRefsRequest(...branches)));
  return new Map(branches.flatMap((b) => (refs.has(`refs/heads/${b}`) ? [[b, refs.get(`refs/heads/${b}`) as string] as const] : [])));
}

/** The branch tip as the server says it now (ls-refs). */
async function branchTip(input: WireFetchInput): Promise<string | undefined> {
  return (await branchTips(input.http, input.url, input.headers, [input.branch])).get(input.branch);
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

/** Writes a pack indexed in this process into the cache, the index last (readers find packs by their .idx). */
async function storeIndexed(gitdir: string, indexed: IndexedPack): Promise<void> {
  const name = path.join(gitdir, 'objects', 'pack', `pack-${indexed.checksum}`);
  const [packTmp, idxTmp] = await Promise.all([writeSynced(`${name}.pack`, indexed.pack), writeSynced(`${name}.idx`, indexed.idx)]);
  await rename(packTmp, `${name}.pack`);
  await rename(idxTmp, `${name}.idx`);
}

/** The pack completed and indexed in this process (pack-index.ts; a thin pack's bases read with `readObject`). */
async function indexInProcess(pack: Buffer, readObject: ReadObject): Promise<IndexedPack> {
  try {
    return indexPack(pack);
  } catch (err) {
    if (!(err instanceof ThinPackError)) throw err;
    const bases = new Map<string, PackBase>();
    for (const oid of err.missing) bases.set(oid, await readObject(oid));
    return indexPack(pack, bases);
  }
}

/** Writes `data` beside `file` under a temporary name, flushed to disk (as git flushes packs); returns that name. */
async function writeSynced(file: string, data: Buffer): Promise<string> {
  const tmp = path.join(path.dirname(file), `tmp_pack_sless_${process.pid}_${path.basename(file)}`);
  const fh = await open(tmp, 'w', 0o444);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return tmp;
}

/** `git index-pack --stdin --fix-thin`; its temporary file is removed when it fails. */
async function gitIndexPack(gitdir: string, pack: Buffer): Promise<void> {
  const result = await runGit(['index-pack', '--stdin', '--fix-thin'], { gitdir, input: pack });
  if (result.code === 0) return;
  const dir = path.join(gitdir, 'objects', 'pack');
  const leftovers = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.startsWith('tmp_pack_'));
  await Promise.all(leftovers.map((f) => rm(path.join(dir, f), { force: true })));
  throw new Error(`git index-pack of the fetched pack failed: ${result.stderr.trim()}`);
}
