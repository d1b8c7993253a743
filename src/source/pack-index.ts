// Indexes a small fetched pack in this process, as `git index-pack --fix-thin` does, so a one-change
// fetch needs no git process at all (a process start costs 10-30 ms here under load, more than reading
// a handful of objects): every object is inflated, deltas are resolved, the bases a thin pack's deltas
// name outside it (given by the caller, read from the cache) are appended whole, and the `.idx`
// (version 2: ids, CRC-32s, offsets) is written byte for byte as git writes it. A pack that does not
// parse throws PackIndexError; one that needs bases not given throws ThinPackError with their ids.
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';

/** The pack cannot be indexed here (thin, corrupt, or a format this indexer does not read). */
export class PackIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackIndexError';
  }
}

/** The pack's deltas name these objects outside it: read them from the cache and index again. */
export class ThinPackError extends PackIndexError {
  constructor(readonly missing: readonly string[]) {
    super(`thin pack: ${missing.length} delta base(s) outside the pack`);
    this.name = 'ThinPackError';
  }
}

/** An object given as a base for a thin pack's deltas. */
export interface PackBase {
  readonly type: 'commit' | 'tree' | 'blob' | 'tag';
  readonly content: Buffer;
}

const TYPE_NAMES: Record<number, string> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

interface RawEntry {
  readonly offset: number;
  /** Offset of the next entry (or of the trailer): the entry's bytes, for its CRC-32. */
  end: number;
  readonly type: number;
  readonly data: Buffer;
  readonly baseOffset?: number;
  readonly baseOid?: string;
}

export interface IndexedPack {
  /** The pack to store: the one given, with the bases appended when it was thin. */
  readonly pack: Buffer;
  /** The `.idx` file. */
  readonly idx: Buffer;
  /** The pack's trailing SHA-1 (hex): git names the files `pack-<this>.pack` / `.idx`. */
  readonly checksum: string;
  /** The objects of the pack, by id (the appended bases included). */
  readonly objects: ReadonlyMap<string, PackBase>;
}

/** Completes a thin `received` pack with `bases` and builds its version-2 index. Throws PackIndexError, ThinPackError. Pure. */
export function indexPack(received: Buffer, bases: ReadonlyMap<string, PackBase> = new Map()): IndexedPack {
  let pack = received;
  if (pack.length < 32 || pack.subarray(0, 4).toString('latin1') !== 'PACK')
    throw new PackIndexError('not a pack (no PACK header)');
  const version = pack.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new PackIndexError(`pack version ${version} is not supported`);
  const count = pack.readUInt32BE(8);
  let trailerAt = pack.length - 20;
  if (
    createHash('sha1').update(pack.subarray(0, trailerAt)).digest('hex') !==
    pack.subarray(trailerAt).toString('hex')
  )
    throw new PackIndexError('pack checksum mismatch');

  const entries: RawEntry[] = [];
  let at = 12;
  for (let n = 0; n < count; n++) {
    if (at >= trailerAt) throw new PackIndexError(`pack ends after ${n} of ${count} objects`);
    const offset = at;
    let c = pack[at++] ?? 0;
    const type = (c >> 4) & 7;
    let size = c & 15;
    let shift = 4;
    while (c & 0x80) {
      c = pack[at++] ?? 0;
      size += (c & 0x7f) * 2 ** shift;
      shift += 7;
    }
    let baseOffset: number | undefined;
    let baseOid: string | undefined;
    if (type === OFS_DELTA) {
      c = pack[at++] ?? 0;
      let back = c & 0x7f;
      while (c & 0x80) {
        c = pack[at++] ?? 0;
        back = (back + 1) * 128 + (c & 0x7f);
      }
      baseOffset = offset - back;
      if (baseOffset < 12) throw new PackIndexError(`object at ${offset}: delta base before the pack start`);
    } else if (type === REF_DELTA) {
      baseOid = pack.subarray(at, at + 20).toString('hex');
      at += 20;
    } else if (!TYPE_NAMES[type]) throw new PackIndexError(`object at ${offset}: unknown type ${type}`);
    let data: Buffer;
    let used: number;
    try {
      const r = zlib.inflateSync(pack.subarray(at, trailerAt), { info: true }) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      data = r.buffer;
      used = r.engine.bytesWritten;
    } catch (err) {
      throw new PackIndexError(`object at ${offset}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (data.length !== size)
      throw new PackIndexError(`object at ${offset}: ${data.length} bytes inflated, header says ${size}`);
    at += used;
    const prev = entries[entries.length - 1];
    if (prev) prev.end = offset;
    entries.push({
      offset,
      end: at,
      type,
      data,
      ...(baseOffset !== undefined ? { baseOffset } : {}),
      ...(baseOid ? { baseOid } : {}),
    });
  }
  if (at !== trailerAt) throw new PackIndexError(`${trailerAt - at} stray bytes after the last object`);

  // A thin pack: its outside bases are appended whole (like --fix-thin), the count and checksum redone.
  const inPack = new Set<string>();
  const outside = new Set<string>();
  for (const e of entries)
    if (e.type !== OFS_DELTA && e.type !== REF_DELTA) inPack.add(objectId(e.type, e.data));
  for (const e of entries) if (e.baseOid && !inPack.has(e.baseOid)) outside.add(e.baseOid);
  // (A REF_DELTA base may itself be a delta in the pack: only ids given as bases are appended.)
  const appended = [...outside].filter((oid) => bases.has(oid));
  if (appended.length > 0) {
    const parts: Buffer[] = [pack.subarray(0, trailerAt)];
    let end = trailerAt;
    for (const oid of appended) {
      const base = bases.get(oid)!;
      const type = TYPE_CODES[base.type]!;
      const entry = Buffer.concat([entryHeader(type, base.content.length), zlib.deflateSync(base.content)]);
      entries[entries.length - 1]!.end = end;
      entries.push({ offset: end, end: end + entry.length, type, data: base.content });
      parts.push(entry);
      end += entry.length;
    }
    const body = Buffer.concat(parts);
    body.writeUInt32BE(count + appended.length, 8);
    pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    trailerAt = end;
  }

  const byOffset = new Map(entries.map((e) => [e.offset, e]));
  const resolved = new Map<number, { type: number; content: Buffer; oid: string }>();
  const byOid = new Map<string, number>();
  const settle = (e: RawEntry, type: number, content: Buffer): void => {
    const oid = objectId(type, content);
    resolved.set(e.offset, { type, content, oid });
    byOid.set(oid, e.offset);
  };
  for (const e of entries) if (e.type !== OFS_DELTA && e.type !== REF_DELTA) settle(e, e.type, e.data);
  // Deltas may name deltas: resolve in rounds until none is left or no round makes progress.
  let pending = entries.filter((e) => !resolved.has(e.offset));
  while (pending.length > 0) {
    const left: RawEntry[] = [];
    for (const e of pending) {
      const baseAt = e.baseOffset ?? (e.baseOid ? byOid.get(e.baseOid) : undefined);
      const base = baseAt === undefined ? undefined : resolved.get(baseAt);
      if (!base) {
        if (e.baseOffset !== undefined && !byOffset.has(e.baseOffset))
          throw new PackIndexError(`object at ${e.offset}: no object at its delta base ${e.baseOffset}`);
        left.push(e);
        continue;
      }
      settle(e, base.type, applyDelta(base.content, e.data, e.offset));
    }
    if (left.length === pending.length) {
      const missing = [
        ...new Set(left.map((e) => e.baseOid).filter((o): o is string => o !== undefined && !bases.has(o))),
      ];
      if (missing.length > 0) throw new ThinPackError(missing);
      throw new PackIndexError(`${left.length} delta(s) whose bases never resolve`);
    }
    pending = left;
  }

  const sorted = entries
    .map((e) => ({
      oid: resolved.get(e.offset)!.oid,
      offset: e.offset,
      crc: zlib.crc32(pack.subarray(e.offset, e.end)),
    }))
    .sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]!.oid === sorted[i - 1]!.oid)
      throw new PackIndexError(`object ${sorted[i]!.oid} is in the pack twice`);
  if (trailerAt >= 2 ** 31) throw new PackIndexError('pack too large for this indexer');
  const objects = new Map<string, PackBase>();
  for (const r of resolved.values())
    objects.set(r.oid, { type: TYPE_NAMES[r.type] as PackBase['type'], content: r.content });
  return {
    pack,
    idx: writeIdx(sorted, pack.subarray(trailerAt)),
    checksum: pack.subarray(trailerAt).toString('hex'),
    objects,
  };
}

const TYPE_CODES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

function objectId(type: string | number, content: Buffer): string {
  const name = typeof type === 'number' ? TYPE_NAMES[type] : type;
  return createHash('sha1').update(`${name} ${content.length}\0`).update(content).digest('hex');
}

function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Buffer.from(bytes);
}

function writeIdx(
  sorted: ReadonlyArray<{ oid: string; offset: number; crc: number }>,
  packChecksum: Buffer,
): Buffer {
  const n = sorted.length;
  const out = Buffer.alloc(8 + 256 * 4 + n * (20 + 4 + 4) + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const counts = new Array<number>(256).fill(0);
  for (const s of sorted) counts[Number.parseInt(s.oid.slice(0, 2), 16)]!++;
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += counts[i]!;
    out.writeUInt32BE(total, 8 + i * 4);
  }
  let at = 8 + 1024;
  for (const s of sorted) at += out.write(s.oid, at, 'hex');
  for (const s of sorted) at = out.writeUInt32BE(s.crc >>> 0, at);
  for (const s of sorted) at = out.writeUInt32BE(s.offset, at);
  at += packChecksum.copy(out, at);
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/** Applies a git delta to `base`. Throws PackIndexError on a malformed delta. Pure. */
export function applyDelta(base: Buffer, delta: Buffer, where = 0): Buffer {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    let c: number;
    do {
      c = delta[at++] ?? 0;
      value += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80 && at < delta.length);
    return value;
  };
  const srcSize = varint();
  const dstSize = varint();
  if (srcSize !== base.length)
    throw new PackIndexError(
      `object at ${where}: delta expects a ${srcSize}-byte base, it has ${base.length}`,
    );
  const out = Buffer.alloc(dstSize);
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += (delta[at++] ?? 0) * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (0x10 << i)) size += (delta[at++] ?? 0) * 2 ** (8 * i);
      if (size === 0) size = 0x10000;
      if (offset + size > base.length || written + size > dstSize)
        throw new PackIndexError(`object at ${where}: delta copies outside its base`);
      written += base.copy(out, written, offset, offset + size);
    } else if (op !== 0) {
      if (at + op > delta.length || written + op > dstSize)
        throw new PackIndexError(`object at ${where}: delta inserts past its end`);
      written += delta.copy(out, written, at, at + op);
      at += op;
    } else throw new PackIndexError(`object at ${where}: delta opcode 0`);
  }
  if (written !== dstSize)
    throw new PackIndexError(`object at ${where}: delta made ${written} bytes, expected ${dstSize}`);
  return out;
}
