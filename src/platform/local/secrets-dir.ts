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

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The environment of `env_from_secrets` in sless dev: every key of each secret folder, later secrets
 * winning (the order of envFrom on Kubernetes). A key that is no environment variable name is left out,
 * as the kubelet leaves it out.
 */
export async function secretEnvFrom(dir: string | undefined, secrets: readonly string[]): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of secrets) {
    for (const [key, value] of Object.entries(await readSecretDir(dir, name))) if (ENV_NAME.test(key)) env[key] = value;
  }
  return env;
}
