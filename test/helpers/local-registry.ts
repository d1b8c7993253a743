// A real image registry on 127.0.0.1 for tests that need one without the real node: Debian's
// docker-registry (installed by .ci/install.d/25-node.sh), plain HTTP, optionally with htpasswd Basic
// auth (the real node's auth registry user). pushTinyImage puts a minimal image (an empty config, no
// layers) under a name through the v2 API, enough for anything that resolves manifests.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AUTH_REGISTRY_USER } from '../cluster/node/plan.ts';
import { freePorts } from '../cluster/processes.ts';

export const DOCKER_REGISTRY_BIN = '/usr/bin/docker-registry';

export interface LocalRegistry {
  /** 127.0.0.1:port */
  readonly address: string;
  /** With `auth`: the one user. */
  readonly credentials?: { readonly username: string; readonly password: string };
  stop(): Promise<void>;
}

export async function startLocalRegistry(options: { auth?: boolean } = {}): Promise<LocalRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-registry-'));
  const [port] = await freePorts(1);
  const htpasswd = path.join(dir, 'htpasswd');
  if (options.auth) await writeFile(htpasswd, `${AUTH_REGISTRY_USER.htpasswd}\n`);
  const config = path.join(dir, 'registry.yaml');
  await writeFile(
    config,
    `version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n` +
      (options.auth ? `auth:\n  htpasswd:\n    realm: sless-test\n    path: ${htpasswd}\n` : ''),
  );
  const child: ChildProcess = spawn(DOCKER_REGISTRY_BIN, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`http://${address}/v2/`).then((r) => r.status === 200 || r.status === 401, () => false);
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`docker-registry on ${address} did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address,
    ...(options.auth ? { credentials: { username: AUTH_REGISTRY_USER.username, password: AUTH_REGISTRY_USER.password } } : {}),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Pushes a minimal image to `registry` (host:port) as `repository:tag`; answers its digest. */
export async function pushTinyImage(registry: string, repository: string, tag: string, credentials?: { username: string; password: string }): Promise<string> {
  const auth: Record<string, string> = credentials ? { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` } : {};
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] }, config: {} }));
  const configDigest = `sha256:${createHash('sha256').update(config).digest('hex')}`;
  const start = await fetch(`http://${registry}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers: auth });
  if (start.status !== 202) throw new Error(`starting a blob upload to ${registry}/${repository}: ${start.status} ${await start.text()}`);
  const location = new URL(start.headers.get('location') ?? '', `http://${registry}`);
  location.searchParams.set('digest', configDigest);
  const put = await fetch(location, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: config });
  if (put.status !== 201) throw new Error(`uploading the config blob: ${put.status} ${await put.text()}`);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: config.length },
      layers: [],
    }),
  );
  const res = await fetch(`http://${registry}/v2/${repository}/manifests/${tag}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    body: manifest,
  });
  if (res.status !== 201) throw new Error(`putting the manifest ${registry}/${repository}:${tag}: ${res.status} ${await res.text()}`);
  return res.headers.get('docker-content-digest') ?? '';
}
