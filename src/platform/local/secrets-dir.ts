// `sless dev --secrets-dir DIR`: the local stand-in for Kubernetes Secrets. A secret `name` is the
// folder DIR/<name>, one file per key (the layout of a Secret mounted as a volume: `kubectl create
// secret generic name --from-file=DIR/name` makes the same Secret). One trailing newline is dropped
// (`echo secret > password` writes one); files starting with "." are skipped (a mounted Secret's
// ..data links). Credentials live here, never in function.yaml.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export class SecretNotFound extends Error {}

export async function readSecretDir(dir: string | undefined, name: string): Promise<Record<string, string>> {
  if (dir === undefined) throw new SecretNotFound(`secret "${name}" is named, but sless dev has no --secrets-dir; put its keys in DIR/${name}/<key> and pass --secrets-dir DIR`);
  const folder = path.join(dir, name);
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    throw new SecretNotFound(`secret "${name}" not found: no folder ${folder} (--secrets-dir ${dir})`);
  }
  const out: Record<string, string> = {};
  for (const e of entries) {
    if (e.name.startsWith('.') || e.isDirectory()) continue;
    out[e.name] = (await readFile(path.join(folder, e.name), 'utf8')).replace(/\r?\n$/, '');
  }
  return out;
}
