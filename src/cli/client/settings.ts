// Where a client command sends its requests: the endpoint and token from SLESS_ENDPOINT +
// SLESS_API_TOKEN, else from the file `sless login` wrote (config.json under the config dir, 0600);
// the namespace from -n, else SLESS_NAMESPACE, else the token's own.
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClientEnv } from '../../config/client-env.ts';
import { CliError, oneLine } from './errors.ts';
import { tokenNamespace } from './token-namespace.ts';

export interface Target {
  /** Base URL without a trailing slash. */
  readonly endpoint: string;
  readonly token: string;
  readonly namespace: string;
}

interface StoredLogin {
  endpoint: string;
  token: string;
}

const HOW = 'set SLESS_ENDPOINT and SLESS_API_TOKEN, or run sless login --endpoint URL --token-file FILE';

export function configFile(env: ClientEnv): string {
  return path.join(env.configDir, 'config.json');
}

/** An endpoint as given by a user: an http(s) URL; returned without the trailing slash. */
export function normalizeEndpoint(text: string, where: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(
      `${where} "${text}" is not a URL; give the server's base URL, e.g. http://localhost:8080`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(
      `${where} "${text}" is not an http(s) URL; give the server's base URL, e.g. http://localhost:8080`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

async function readStoredLogin(file: string): Promise<StoredLogin | undefined> {
  let mode: number;
  try {
    mode = (await stat(file)).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read ${file}: ${oneLine(err)}`);
  }
  // A token that others can read is a leaked token: refuse rather than use it.
  if ((mode & 0o077) !== 0)
    throw new CliError(
      `${file} can be read by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 ${file}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${oneLine(err)}; run sless login again`);
  }
  const p = parsed as Partial<StoredLogin> | null;
  if (typeof p?.endpoint !== 'string' || typeof p.token !== 'string')
    throw new CliError(`${file} lacks "endpoint" or "token"; run sless login again`);
  return { endpoint: p.endpoint, token: p.token };
}

export async function resolveTarget(env: ClientEnv, namespaceFlag: string | undefined): Promise<Target> {
  let endpoint = env.endpoint;
  let token = env.token;
  let source = 'SLESS_ENDPOINT';
  if (endpoint === undefined || token === undefined) {
    const stored = await readStoredLogin(configFile(env));
    if (stored === undefined) {
      throw new CliError(`no ${endpoint === undefined ? 'endpoint' : 'token'} configured; ${HOW}`);
    }
    if (endpoint === undefined) source = configFile(env);
    endpoint ??= stored.endpoint;
    token ??= stored.token;
  }
  const namespace = namespaceFlag ?? env.namespace ?? tokenNamespace(token);
  return { endpoint: normalizeEndpoint(endpoint, source), token, namespace };
}

/** Stores endpoint and token for later commands: a 0600 file in a 0700 folder, replaced atomically. */
export async function storeLogin(env: ClientEnv, login: StoredLogin): Promise<string> {
  const file = configFile(env);
  try {
    await mkdir(env.configDir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  } catch (err) {
    throw new CliError(
      `cannot write ${file}: ${oneLine(err)}; check that ${env.configDir} is writable or set XDG_CONFIG_HOME`,
    );
  }
  return file;
}
