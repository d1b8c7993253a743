// Git protocol v2 over smart HTTP, spoken in-process: each command is one POST to `git-upload-pack`
// (no ref-advertisement GET first, no git process on this side until the pack is indexed). Used for
// incremental fetches into a cache that already holds an earlier head: `git fetch` itself spends
// three HTTP round trips (advertisement, ls-refs, fetch) and a process start on the same work.
// Requests go through the GitSource's HTTP client (git-http.ts), so the TargetPolicy, the timeouts and
// the response-size cap hold exactly as on the isomorphic-git path. A server that does not answer as a
// v2 server gets a WireUnsupportedError and the caller falls back to `git fetch`.
import type { HttpClient } from 'isomorphic-git';

/** The server did not speak protocol v2 as expected (or refused the request): fall back to `git fetch`. */
export class WireUnsupportedError extends Error {
  constructor(
    message: string,
    /** True when the server does not speak v2 at all (not worth trying again); false for a refused request. */
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'WireUnsupportedError';
  }
}

export interface FetchRequest {
  readonly want: string;
  /** More commits wanted in the same pack (a preview's head and its base branch's tip). */
  readonly alsoWant?: readonly string[];
  /** Commits the cache holds (the cached head). */
  readonly haves: readonly string[];
  /** The cache's shallow boundary (its `shallow` file). */
  readonly shallow: readonly string[];
  /** History depth to fetch; 1 for the cache's single-commit history; none: the whole history (merge bases). */
  readonly depth?: number;
}

export interface FetchResponse {
  readonly shallow: readonly string[];
  readonly unshallow: readonly string[];
  /** The packfile (may be thin: index it with `git index-pack --fix-thin`). */
  readonly pack: Buffer;
}

const OID = /^[0-9a-f]{40}$/;

/** One pkt-line: 4 hex digits of length (including themselves), then the payload. Pure. */
export function pktLine(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'ascii'), body]);
}

const FLUSH = Buffer.from('0000', 'ascii');
const DELIM = Buffer.from('0001', 'ascii');

function command(name: string, args: readonly string[]): Buffer {
  return Buffer.concat([pktLine(`command=${name}\n`), DELIM, ...args.map((a) => pktLine(`${a}\n`)), FLUSH]);
}

/** `ls-refs` for the branches named (a prefix each: the caller picks the exact ref). Pure. */
export function lsRefsRequest(...branches: readonly string[]): Buffer {
  return command('ls-refs', branches.map((b) => `ref-prefix refs/heads/${b}`));
}

/** `fetch` of one commit (or a few) with a depth or the whole history, offering what the cache holds. Pure. */
export function fetchRequest(req: FetchRequest): Buffer {
  const wants = [req.want, ...(req.alsoWant ?? [])];
  for (const oid of [...wants, ...req.haves, ...req.shallow]) {
    if (!OID.test(oid)) throw new Error(`not an object id: ${JSON.stringify(oid)}`);
  }
  return command('fetch', [
    'thin-pack',
    'no-progress',
    'ofs-delta',
    ...(req.depth === undefined ? [] : [`deepen ${req.depth}`]),
    ...req.shallow.map((o) => `shallow ${o}`),
    ...wants.map((o) => `want ${o}`),
    ...req.haves.map((o) => `have ${o}`),
    'done',
  ]);
}

type Pkt = { kind: 'data'; data: Buffer } | { kind: 'flush' | 'delim' | 'end' };

/** Splits a response into pkt-lines. Throws WireUnsupportedError on framing that is not pkt-lines. Pure. */
export function splitPktLines(buf: Buffer): Pkt[] {
  const out: Pkt[] = [];
  let at = 0;
  while (at < buf.length) {
    const head = buf.subarray(at, at + 4).toString('ascii');
    if (!/^[0-9a-f]{4}$/.test(head)) throw new WireUnsupportedError(`not a pkt-line at byte ${at}`, true);
    const len = Number.parseInt(head, 16);
    if (len === 0) out.push({ kind: 'flush' });
    else if (len === 1) out.push({ kind: 'delim' });
    else if (len === 2) out.push({ kind: 'end' });
    else if (len < 4 || at + len > buf.length) throw new WireUnsupportedError(`truncated pkt-line at byte ${at}`, false);
    else out.push({ kind: 'data', data: buf.subarray(at + 4, at + len) });
    at += len < 4 ? 4 : len;
  }
  return out;
}

function text(data: Buffer): string {
  return data.toString('utf8').replace(/\n$/, '');
}

function checkErr(line: string): void {
  if (line.startsWith('ERR ')) throw new WireUnsupportedError(`the server refused: ${line.slice(4)}`, false);
}

/** ls-refs output → ref name → oid. Pure. */
export function parseLsRefs(buf: Buffer): Map<string, string> {
  const refs = new Map<string, string>();
  for (const p of splitPktLines(buf)) {
    if (p.kind !== 'data') continue;
    const line = text(p.data);
    checkErr(line);
    const [oid = '', name = ''] = line.split(' ');
    if (OID.test(oid) && name) refs.set(name, oid);
  }
  return refs;
}

/** A v2 fetch response → shallow updates and the pack (side band 1). Pure. */
export function parseFetchResponse(buf: Buffer): FetchResponse {
  const shallow: string[] = [];
  const unshallow: string[] = [];
  const pack: Buffer[] = [];
  let section = '';
  for (const p of splitPktLines(buf)) {
    if (p.kind !== 'data') {
      if (p.kind === 'delim' || p.kind === 'flush') section = section === 'packfile' && p.kind === 'flush' ? 'done' : '';
      continue;
    }
    if (section === 'packfile') {
      const band = p.data[0];
      if (band === 1) pack.push(p.data.subarray(1));
      else if (band === 3) throw new WireUnsupportedError(`the server failed: ${text(p.data.subarray(1))}`, false);
      continue;
    }
    const line = text(p.data);
    checkErr(line);
    if (section === '') {
      section = line;
      continue;
    }
    if (section === 'shallow-info') {
      const [kind, oid = ''] = line.split(' ');
      if (kind === 'shallow') shallow.push(oid);
      else if (kind === 'unshallow') unshallow.push(oid);
    }
  }
  const packBytes = Buffer.concat(pack);
  if (packBytes.subarray(0, 4).toString('ascii') !== 'PACK') throw new WireUnsupportedError('the fetch response holds no packfile', true);
  return { shallow, unshallow, pack: packBytes };
}

/** POSTs one v2 command to `<url>/git-upload-pack` and returns the whole response body. */
export async function postCommand(
  http: HttpClient,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
): Promise<Buffer> {
  const res = await http.request({
    url: `${url.replace(/\/+$/, '')}/git-upload-pack`,
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/x-git-upload-pack-request',
      accept: 'application/x-git-upload-pack-result',
      'git-protocol': 'version=2',
      'content-length': String(body.length),
    },
    body: (async function* () {
      yield new Uint8Array(body);
    })(),
  });
  const parts: Uint8Array[] = [];
  for await (const chunk of res.body ?? []) parts.push(chunk);
  if (res.statusCode !== 200) throw new WireUnsupportedError(`HTTP ${res.statusCode} from git-upload-pack`, false);
  const type = res.headers?.['content-type'] ?? '';
  if (!type.startsWith('application/x-git-upload-pack-result')) {
    throw new WireUnsupportedError(`git-upload-pack answered with content-type "${type}"`, true);
  }
  return Buffer.concat(parts);
}
