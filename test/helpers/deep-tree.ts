// A commit whose tree nests folders `depth` deep (issue 31 item 1), built from the inside out (the
// objects `git hash-object -w` / `mktree` / `commit-tree` would write) into one pack that
// `git index-pack` stores in a bare repository: no process per level, 20,000 levels in about a second.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { git } from './git-server.ts';

const TYPE_CODE = { commit: 1, tree: 2, blob: 3 } as const;

/** Objects gathered for one pack. */
class PackWriter {
  private readonly parts: Buffer[] = [];
  private count = 0;

  add(type: keyof typeof TYPE_CODE, content: Buffer): string {
    const oid = createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
    // The object header: type and size, 4 bits then 7 bits per byte.
    let size = content.length;
    const head = [(TYPE_CODE[type] << 4) | (size & 0x0f)];
    size >>= 4;
    while (size > 0) {
      head[head.length - 1]! |= 0x80;
      head.push(size & 0x7f);
      size >>= 7;
    }
    this.parts.push(Buffer.from(head), deflateSync(content));
    this.count++;
    return oid;
  }

  pack(): Buffer {
    const header = Buffer.alloc(12);
    header.write('PACK', 0);
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(this.count, 8);
    const body = Buffer.concat([header, ...this.parts]);
    return Buffer.concat([body, createHash('sha1').update(body).digest()]);
  }
}

type Entry = { readonly mode: '100644' | '40000'; readonly name: string; readonly oid: string };

function treeContent(entries: readonly Entry[]): Buffer {
  // git orders entries by name, a folder's name as if it ended in "/".
  const key = (e: Entry) => (e.mode === '40000' ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, 'hex')]));
}

export interface DeepCommitOptions {
  /** Folders above the one file. */
  readonly depth: number;
  /** Each folder's name (default `d`). */
  readonly folderName?: string;
  /** Files beside the deep chain at the root (path → content; one folder level at most). */
  readonly beside?: Readonly<Record<string, string>>;
  /** The branch to point at the commit (default main). */
  readonly branch?: string;
}

/** Writes the commit into `gitdir` (a bare repository), points the branch at it and returns its id. */
export async function writeDeepCommit(gitdir: string, o: DeepCommitOptions): Promise<string> {
  const pack = new PackWriter();
  const writeObject = (_gitdir: string, type: keyof typeof TYPE_CODE, content: Buffer) => Promise.resolve(pack.add(type, content));
  let oid = await writeObject(gitdir, 'blob', Buffer.from('at the bottom\n'));
  let entry: Entry = { mode: '100644', name: 'deep.txt', oid };
  const name = o.folderName ?? 'd';
  for (let level = 0; level < o.depth; level++) {
    oid = await writeObject(gitdir, 'tree', treeContent([entry]));
    entry = { mode: '40000', name, oid };
  }
  const root: Entry[] = [entry];
  const folders = new Map<string, Entry[]>();
  for (const [file, content] of Object.entries(o.beside ?? {})) {
    const blob = await writeObject(gitdir, 'blob', Buffer.from(content));
    const [dir, base] = file.includes('/') ? file.split('/', 2) : ['', file];
    if (!dir) root.push({ mode: '100644', name: base!, oid: blob });
    else folders.set(dir, [...(folders.get(dir) ?? []), { mode: '100644', name: base!, oid: blob }]);
  }
  for (const [dir, entries] of folders) root.push({ mode: '40000', name: dir, oid: await writeObject(gitdir, 'tree', treeContent(entries)) });
  const tree = await writeObject(gitdir, 'tree', treeContent(root));
  const commit = await writeObject(
    gitdir,
    'commit',
    Buffer.from(`tree ${tree}\nauthor sless test <test@sless.invalid> 1700000000 +0000\ncommitter sless test <test@sless.invalid> 1700000000 +0000\n\n${o.depth} folders deep\n`),
  );
  await new Promise<void>((resolve, reject) => {
    const child = execFile('git', ['--git-dir', gitdir, 'index-pack', '--stdin'], (err) => (err ? reject(err) : resolve()));
    child.stdin?.end(pack.pack());
  });
  await git(['--git-dir', gitdir, 'update-ref', `refs/heads/${o.branch ?? 'main'}`, commit]);
  return commit;
}
