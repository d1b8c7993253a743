// Reads an image back from the test registry (plain HTTP, no credentials) to compare two builds of the
// same function: its config, and the files its layers make, as one filesystem.
import { gunzipSync } from 'node:zlib';

const MANIFEST_TYPES = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

interface Manifest {
  readonly config: { readonly digest: string };
  readonly layers: ReadonlyArray<{ readonly digest: string; readonly mediaType: string }>;
}

export interface ImageConfig {
  readonly config?: Record<string, unknown>;
}

/** One entry of the image's filesystem: type, mode, owner and, for regular files, size. */
export type FileEntry = string;

function split(image: string): { host: string; repo: string; ref: string } {
  const [named = '', digest] = image.split('@');
  const host = named.slice(0, named.indexOf('/'));
  const path = named.slice(host.length + 1);
  const colon = path.lastIndexOf(':');
  return { host, repo: colon < 0 ? path : path.slice(0, colon), ref: digest ?? path.slice(colon + 1) };
}

async function get(url: string, accept?: string): Promise<Buffer> {
  const res = await fetch(url, accept ? { headers: { accept } } : {});
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

export async function readImage(image: string): Promise<{ manifest: Manifest; config: ImageConfig; blob(digest: string): Promise<Buffer> }> {
  const { host, repo, ref } = split(image);
  const manifest = JSON.parse((await get(`http://${host}/v2/${repo}/manifests/${ref}`, MANIFEST_TYPES)).toString()) as Manifest;
  const blob = (digest: string) => get(`http://${host}/v2/${repo}/blobs/${digest}`);
  const config = JSON.parse((await blob(manifest.config.digest)).toString()) as ImageConfig;
  return { manifest, config, blob };
}

/**
 * The filesystem the layers from `from` on make (whiteouts applied): path → "type mode uid:gid [size]".
 * Paths without a leading "./" or "/", folders without their trailing "/".
 */
export async function layerFiles(image: string, from: number): Promise<Map<string, FileEntry>> {
  const { manifest, blob } = await readImage(image);
  const files = new Map<string, FileEntry>();
  for (const layer of manifest.layers.slice(from)) {
    const bytes = await blob(layer.digest);
    const tar = layer.mediaType.endsWith('gzip') || bytes[0] === 0x1f ? gunzipSync(bytes) : bytes;
    for (const h of tarEntries(tar)) {
      const path = h.name.replace(/^\.?\//, '').replace(/\/$/, '');
      const base = path.slice(path.lastIndexOf('/') + 1);
      if (base.startsWith('.wh.')) {
        const gone = path.slice(0, path.length - base.length) + base.slice(4);
        for (const k of [...files.keys()]) if (k === gone || k.startsWith(`${gone}/`)) files.delete(k);
        continue;
      }
      if (path) files.set(path, `${h.type} ${h.mode.toString(8)} ${h.uid}:${h.gid}${h.type === '0' ? ` ${h.size}` : ''}`);
    }
  }
  return files;
}

interface TarHeader {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
}

/** The entries of an uncompressed tar (ustar, with PAX and GNU long names). */
function* tarEntries(tar: Buffer): Generator<TarHeader> {
  let off = 0;
  let longName: string | undefined;
  while (off + 512 <= tar.length) {
    const block = tar.subarray(off, off + 512);
    if (block.every((b) => b === 0)) break;
    const str = (a: number, n: number) => block.subarray(a, a + n).toString('utf8').replace(/\0.*$/s, '');
    const num = (a: number, n: number) => parseInt(str(a, n).trim() || '0', 8);
    const size = num(124, 12);
    const type = str(156, 1) || '0';
    const prefix = str(345, 155);
    const body = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type === 'g') continue;
    const name = longName ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
    longName = undefined;
    yield { name, type: type === '\0' ? '0' : type, mode: num(100, 8), uid: num(108, 8), gid: num(116, 8), size };
  }
}
