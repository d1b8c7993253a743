// Which addresses a process listens on, from /proc (Linux): its socket inodes matched against the
// LISTEN rows of /proc/net/tcp and tcp6. For tests that prove a process is reachable on loopback only.
import { readdir, readFile, readlink } from 'node:fs/promises';

/** "127.0.0.1:8080", "0.0.0.0:8080", "[::]:8080", "[::1]:8080", ... for every listening TCP socket of `pid`. */
export async function listeningAddresses(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m?.[1]) inodes.add(m[1]);
  }
  const out: string[] = [];
  for (const [file, v6] of [['/proc/net/tcp', false], ['/proc/net/tcp6', true]] as const) {
    const rows = (await readFile(file, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9] ?? '')) continue;
      out.push(formatAddress(cols[1] ?? '', v6));
    }
  }
  return out;
}

/** True for 127.0.0.0/8, ::1 and ::ffff:127.x. */
export function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address.startsWith('[::1]') || /^\[::ffff:127\./.test(address);
}

function formatAddress(hex: string, v6: boolean): string {
  const [addr = '', portHex = '0'] = hex.split(':');
  const port = parseInt(portHex, 16);
  // /proc/net prints each 32-bit word in host (little-endian) byte order.
  const words = (addr.match(/.{8}/g) ?? []).map((w) => Buffer.from(w, 'hex').reverse());
  if (!v6) return `${[...(words[0] ?? Buffer.alloc(4))].join('.')}:${port}`;
  const bytes = Buffer.concat(words);
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `[::ffff:${[...bytes.subarray(12)].join('.')}]:${port}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  const text = groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/:::+/, '::');
  return `[${text}]:${port}`;
}
